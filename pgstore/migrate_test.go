package pgstore_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/pgstore"
)

// migrations are the rows of the migrations table once Migrate has run.
var migrations = []string{"1 0001_create_pets.sql", "2 0002_idempotency_keys.sql", "3 0003_key_retention.sql"}

// migrateVersions returns the rows of the migrations table of the pets
// table named table in schema, as migrations lists them.
func migrateVersions(t *testing.T, pool *pgxpool.Pool, schema, table string) []string {
	t.Helper()
	return catalog(t, pool, "SELECT version || ' ' || name FROM "+pgx.Identifier{schema, table + "_migrations"}.Sanitize()+" ORDER BY version")
}

// catalog returns the rows of query, of one text column each.
func catalog(t *testing.T, pool *pgxpool.Pool, query string, args ...any) []string {
	t.Helper()
	rows, _ := pool.Query(context.Background(), query, args...) // the error comes back from CollectRows
	got, err := pgx.CollectRows(rows, pgx.RowTo[string])
	must(t, err)
	return got
}

// TestMigrate checks the tables that Migrate creates, for a table whose
// name needs quoting in a string literal too, and would be SQL if it were
// not quoted: their columns, indexes and constraints (no foreign key from
// the keys to the pets); that the database refuses an unknown status; that
// the Store adds and lists on it; and that migrating again changes
// nothing.
func TestMigrate(t *testing.T) {
	pool := pgPool(t)
	ctx := context.Background()
	const table = `It's "Pets"; DROP TABLE pets; --`
	s := pgStore(t, pool, pgstore.WithTable(table))
	schema := strings.Split(s.Table(), `"`)[1]
	const columns = `SELECT column_name::text || ' ' || data_type::text || ' ' || is_nullable::text || coalesce(' ' || identity_generation::text, '')
FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2 ORDER BY ordinal_position`
	const indexes = `SELECT indexname::text || ' ' || regexp_replace(indexdef, '.* USING ', '') FROM pg_indexes
WHERE schemaname = $1 AND tablename = $2 ORDER BY indexname`
	const constraints = `SELECT conname::text || ' ' || contype::text FROM pg_constraint
WHERE conrelid = (SELECT c.oid FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname = $2) ORDER BY conname`
	for _, c := range []struct {
		query, table string
		want         []string
	}{
		{columns, table, []string{"id bigint NO ALWAYS", "name text NO", "category_id bigint NO", "status text YES"}},
		{indexes, table, []string{table + "_pkey btree (id)", table + "_status_id_idx btree (status, id)"}},
		{constraints, table, []string{table + "_pkey p", "status_valid c"}},
		{columns, table + "_keys", []string{"principal text NO", "key text NO", "pet_id bigint NO", "created_at timestamp with time zone NO"}},
		{indexes, table + "_keys", []string{table + "_keys_pkey btree (principal, key)", table + "_keys_time_idx btree (created_at)"}},
		{constraints, table + "_keys", []string{table + "_keys_pkey p"}},
	} {
		if diff := cmp.Diff(c.want, catalog(t, pool, c.query, schema, c.table)); diff != "" {
			t.Errorf("%s of %s (-want +got):\n%s", strings.Fields(c.query)[1], c.table, diff)
		}
	}
	_, err := pool.Exec(ctx, "INSERT INTO "+s.Table()+" (name, category_id, status) VALUES ('Rex', 1, 'lost')")
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "23514" {
		t.Errorf("inserting status 'lost': err = %v; want a check_violation (23514)", err)
	}

	added := pgAdd(t, s, petstore.NewPet{Name: "Rex", CategoryID: 1, Status: petstore.StatusSold})
	for range 2 {
		pgMigrate(t, s)
	}
	for _, opts := range []petstore.ListOptions{{}, {Status: petstore.StatusSold}} {
		if diff := cmp.Diff([]petstore.Pet{added}, pgList(t, s, opts)); diff != "" {
			t.Errorf("List(%+v) after migrating again (-want +got):\n%s", opts, diff)
		}
	}
	if diff := cmp.Diff(migrations, migrateVersions(t, pool, schema, table)); diff != "" {
		t.Errorf("migrations table (-want +got):\n%s", diff)
	}
}

// TestMigrateConcurrently starts several instances at once, on separate
// pools as separate processes would, for several tables in one schema that
// does not exist yet; then the Stores of the tables keep their pets apart.
func TestMigrateConcurrently(t *testing.T) {
	pools := []*pgxpool.Pool{pgPool(t), pgPool(t)}
	schema := pgSchema(t, pools[0])
	tables := []string{"pets", "animals", "more_pets"}
	const perTable = 4
	var wg sync.WaitGroup
	errs := make(chan error, len(tables)*perTable)
	var stores []*pgstore.Store
	for i := range len(tables) * perTable {
		s := pgNew(t, pools[i%len(pools)], pgstore.WithSchema(schema), pgstore.WithTable(tables[i%len(tables)]))
		stores = append(stores, s)
		wg.Go(func() { errs <- s.Migrate(context.Background()) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("Migrate: %v", err)
		}
	}
	for i, table := range tables {
		if diff := cmp.Diff(migrations, migrateVersions(t, pools[0], schema, table)); diff != "" {
			t.Errorf("migrations table of %s (-want +got):\n%s", table, diff)
		}
		pet := pgAdd(t, stores[i], petstore.NewPet{Name: table, CategoryID: 1})
		if diff := cmp.Diff([]petstore.Pet{pet}, pgList(t, stores[i+len(tables)], petstore.ListOptions{})); diff != "" {
			t.Errorf("List of %s (-want +got):\n%s", table, diff)
		}
	}
}

// TestMigrateSearchPath checks that without WithSchema the table goes where
// the connection's search_path says, and the errors of Migrate and Check
// while the search_path names no schema that exists.
func TestMigrateSearchPath(t *testing.T) {
	admin := pgPool(t)
	schema := pgSchema(t, admin)
	s := pgNew(t, pgPool(t, func(c *pgxpool.Config) { c.ConnConfig.RuntimeParams["search_path"] = schema }))
	want := `pgstore: the schema "` + schema + `" that PostgreSQL's search_path names does not exist, so there is nowhere ` +
		"to create the pets table; create it with CREATE SCHEMA " + schema + ", or set search_path in the URL's query to a schema that exists"
	for name, err := range map[string]error{"Migrate": s.Migrate(context.Background()), "Check": s.Check(context.Background())} {
		if !errors.Is(err, pgstore.ErrNoSchema) {
			t.Errorf("%s = %v; want an error wrapping ErrNoSchema", name, err)
			continue
		}
		if diff := cmp.Diff(want, err.Error()); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
	pgExec(t, admin, "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize())
	pgAdd(t, pgMigrate(t, s), petstore.NewPet{Name: "Rex", CategoryID: 1})
	if n := pgCount(t, admin, pgx.Identifier{schema, "pets"}.Sanitize()); n != 1 {
		t.Errorf("%s.pets holds %d pets; want 1", schema, n)
	}
	if diff := cmp.Diff(migrations, migrateVersions(t, admin, schema, "pets")); diff != "" {
		t.Errorf("migrations table (-want +got):\n%s", diff)
	}
}

// TestMigrateRollsBack checks that a failed migration leaves nothing behind:
// here the table exists already, made by something else.
func TestMigrateRollsBack(t *testing.T) {
	pool := pgPool(t)
	schema := pgSchema(t, pool)
	s := pgNew(t, pool, pgstore.WithSchema(schema))
	pgExec(t, pool, "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize()+"; CREATE TABLE "+s.Table()+" (x int)")
	if err := s.Migrate(context.Background()); err == nil {
		t.Fatal("Migrate over a foreign table named pets succeeded; want an error")
	}
	var exists bool
	must(t, pool.QueryRow(context.Background(), "SELECT to_regclass($1) IS NOT NULL", pgx.Identifier{schema, "pets_migrations"}.Sanitize()).Scan(&exists))
	if exists {
		t.Error("the failed Migrate left the migrations table behind")
	}
}
