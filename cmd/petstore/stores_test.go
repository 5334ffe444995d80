package main

import (
	"context"
	"testing"
	"time"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/client"
)

// TestChooseStore checks which store the flags and the environment select,
// and that naming two stores is refused with a message that names both.
func TestChooseStore(t *testing.T) {
	const url = "postgres://app@db/shop"
	type choice struct {
		Store    storeKind
		DataFile string
		Postgres string
	}
	tests := []configCase[choice]{
		{name: "default: petstore.db", want: choice{Store: storeSQLite, DataFile: "petstore.db"}},
		{name: "-data", args: []string{"-data", "/var/lib/pets.db"}, want: choice{Store: storeSQLite, DataFile: "/var/lib/pets.db"}},
		{name: "PETSTORE_DATA", env: map[string]string{"PETSTORE_DATA": "env.db"}, want: choice{Store: storeSQLite, DataFile: "env.db"}},
		{name: "-data wins over PETSTORE_DATA", args: []string{"-data", "flag.db"}, env: map[string]string{"PETSTORE_DATA": "env.db"},
			want: choice{Store: storeSQLite, DataFile: "flag.db"}},
		{name: "-store sqlite", args: []string{"-store", "sqlite"}, want: choice{Store: storeSQLite, DataFile: "petstore.db"}},
		{name: "-store memory", args: []string{"-store", "memory"}, want: choice{Store: storeMemory}},
		{name: "PostgreSQL by the environment", env: map[string]string{"PETSTORE_POSTGRES_URL": url}, want: choice{Store: storePostgres, Postgres: url}},
		{name: "-store postgres -postgres", args: []string{"-store", "postgres", "-postgres", url}, want: choice{Store: storePostgres, Postgres: url}},
		{name: "unknown kind", args: []string{"-store", "mysql"}, wantErr: `-store "mysql": want sqlite, memory or postgres`},
		{name: "data file and PostgreSQL", args: []string{"-data", "x.db"}, env: map[string]string{"PETSTORE_POSTGRES_URL": url},
			wantErr: "two stores are named: a data file by -data (x.db) and PostgreSQL by PETSTORE_POSTGRES_URL; keep one of them"},
		{name: "both variables", env: map[string]string{"PETSTORE_DATA": "x.db", "PETSTORE_POSTGRES_URL": url},
			wantErr: "two stores are named: a data file by PETSTORE_DATA (x.db) and PostgreSQL by PETSTORE_POSTGRES_URL; keep one of them"},
		{name: "memory and a data file", args: []string{"-store", "memory", "-data", "x.db"},
			wantErr: "two stores are named: -store memory, and -data; drop one of them"},
		{name: "memory and PostgreSQL", args: []string{"-store", "memory"}, env: map[string]string{"PETSTORE_POSTGRES_URL": url},
			wantErr: "two stores are named: -store memory, and PETSTORE_POSTGRES_URL; drop one of them"},
		{name: "sqlite and PostgreSQL", args: []string{"-store", "sqlite", "-postgres", url},
			wantErr: "two stores are named: -store sqlite, and PostgreSQL by -postgres; drop one of them"},
		{name: "postgres without a URL", args: []string{"-store", "postgres"},
			wantErr: "-store postgres needs the database's URL in PETSTORE_POSTGRES_URL or -postgres"},
		{name: "postgres and a data file", args: []string{"-store", "postgres", "-postgres", url}, env: map[string]string{"PETSTORE_DATA": "x.db"},
			wantErr: "two stores are named: a data file by PETSTORE_DATA (x.db) and PostgreSQL by -postgres; keep one of them"},
		{name: "replicas without PostgreSQL", env: map[string]string{"PETSTORE_POSTGRES_REPLICA_URLS": url},
			wantErr: "PETSTORE_POSTGRES_REPLICA_URLS names PostgreSQL replicas, but pets are kept in sqlite; name the primary in PETSTORE_POSTGRES_URL, or unset PETSTORE_POSTGRES_REPLICA_URLS"},
		{name: "a listen URL without PostgreSQL", args: []string{"-store", "memory", "-postgres-listen", url},
			wantErr: "-postgres-listen (or PETSTORE_POSTGRES_LISTEN_URL) names where to hear of PostgreSQL's new pets, but pets are kept in memory; drop it"},
	}
	checkConfigs(t, tests, func(c config) choice { return choice{Store: c.store, DataFile: c.dataFile, Postgres: c.postgresURL} })
}

// newClient returns a Go client of the server p with the API key key.
func newClient(t *testing.T, p *serverProcess, key string) *client.Client {
	t.Helper()
	c, err := client.New(p.baseURL, client.WithAPIKey(key))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// allPets lists every pet of the server p, page by page.
func allPets(ctx context.Context, t *testing.T, p *serverProcess, key string) []petstore.Pet {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	var pets []petstore.Pet
	for pet, err := range newClient(t, p, key).All(ctx, petstore.ListOptions{}) {
		if err != nil {
			t.Fatalf("listing the pets: %v", err)
		}
		pets = append(pets, pet)
	}
	return pets
}
