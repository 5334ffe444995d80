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

// migrateVersion is a row of the migrations table.
type migrateVersion struct {
	Version int
	Name    string
}

// migrateVersions returns the rows of the migrations table of the pets
// table named table in schema.
func migrateVersions(t *testing.T, pool *pgxpool.Pool, schema, table string) []migrateVersion {
	t.Helper()
	rows, _ := pool.Query(context.Background(), // the error comes back from CollectRows
		"SELECT version, name FROM "+pgx.Identifier{schema, table + "_migrations"}.Sanitize()+" ORDER BY version")
	vs, err := pgx.CollectRows(rows, pgx.RowToStructByPos[migrateVersion])
	if err != nil {
		t.Fatal(err)
	}
	return vs
}

// migrateWant returns what the migrations table lists once Migrate has run.
func migrateWant() []migrateVersion {
	return []migrateVersion{{1, "0001_create_pets.sql"}, {2, "0002_idempotency_keys.sql"}, {3, "0003_key_retention.sql"}}
}

// catalog returns the rows of query, of one text column each.
func catalog(t *testing.T, pool *pgxpool.Pool, query string, args ...any) []string {
	t.Helper()
	rows, _ := pool.Query(context.Background(), query, args...) // the error comes back from CollectRows
	got, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestMigrate checks the tables that Migrate creates, for a table whose
// name needs quoting in a string literal too: their columns, indexes and
// constraints (no foreign key from the keys to the pets); that the
// database refuses an unknown status; and that migrating again changes
// nothing.
func TestMigrate(t *testing.T) {
	pool := pgPool(t)
	ctx := context.Background()
	const table = `it's "pets"`
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

	added := pgAdd(t, s, petstore.NewPet{Name: "Rex", CategoryID: 1})
	for range 2 {
		if err := s.Migrate(ctx); err != nil {
			t.Fatalf("Migrate again: %v", err)
		}
	}
	if got, err := s.List(ctx, petstore.ListOptions{}); err != nil || !cmp.Equal(got, []petstore.Pet{added}) {
		t.Errorf("pets after migrating again = %+v, %v; want %+v", got, err, added)
	}
	if diff := cmp.Diff(migrateWant(), migrateVersions(t, pool, schema, table)); diff != "" {
		t.Errorf("migrations table (-want +got):\n%s", diff)
	}
}

// TestMigrateConcurrently starts several instances at once, on separate
// pools as separate processes would, for several tables in one schema that
// does not exist yet.
func TestMigrateConcurrently(t *testing.T) {
	pools := []*pgxpool.Pool{pgPool(t), pgPool(t)}
	schema := pgSchema(t, pools[0])
	tables := []string{"pets", "animals", "more_pets"}
	const perTable = 4
	var wg sync.WaitGroup
	errs := make(chan error, len(tables)*perTable)
	for i := range len(tables) * perTable {
		s := pgNew(t, pools[i%len(pools)], pgstore.WithSchema(schema), pgstore.WithTable(tables[i%len(tables)]))
		wg.Go(func() { errs <- s.Migrate(context.Background()) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("Migrate: %v", err)
		}
	}
	for _, table := range tables {
		if diff := cmp.Diff(migrateWant(), migrateVersions(t, pools[0], schema, table)); diff != "" {
			t.Errorf("migrations table of %s (-want +got):\n%s", table, diff)
		}
	}
}

// TestMigrateUsesSearchPath checks that without WithSchema the table goes
// where the connection's search_path says.
func TestMigrateUsesSearchPath(t *testing.T) {
	admin := pgPool(t)
	ctx := context.Background()
	schema := pgSchema(t, admin)
	if _, err := admin.Exec(ctx, "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	pool := pgPool(t, func(c *pgxpool.Config) { c.ConnConfig.RuntimeParams["search_path"] = schema })
	s := pgMigrate(t, pgNew(t, pool))
	pgAdd(t, s, petstore.NewPet{Name: "Rex", CategoryID: 1})
	if n := pgCount(t, admin, pgx.Identifier{schema, "pets"}.Sanitize()); n != 1 {
		t.Errorf("%s.pets holds %d pets; want 1", schema, n)
	}
	if diff := cmp.Diff(migrateWant(), migrateVersions(t, admin, schema, "pets")); diff != "" {
		t.Errorf("migrations table (-want +got):\n%s", diff)
	}
}

// TestMigrateRollsBack checks that a failed migration leaves nothing behind:
// here the table exists already, made by something else.
func TestMigrateRollsBack(t *testing.T) {
	pool := pgPool(t)
	ctx := context.Background()
	schema := pgSchema(t, pool)
	s := pgNew(t, pool, pgstore.WithSchema(schema))
	if _, err := pool.Exec(ctx, "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize()+"; CREATE TABLE "+s.Table()+" (x int)"); err != nil {
		t.Fatal(err)
	}
	if err := s.Migrate(ctx); err == nil {
		t.Fatal("Migrate over a foreign table named pets succeeded; want an error")
	}
	var exists bool
	if err := pool.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL",
		pgx.Identifier{schema, "pets_migrations"}.Sanitize()).Scan(&exists); err != nil {
		t.Fatal(err)
	}
	if exists {
		t.Error("the failed Migrate left the migrations table behind")
	}
}

// TestStoresShareSchema checks that two stores in one schema, with two
// tables, keep their pets apart.
func TestStoresShareSchema(t *testing.T) {
	pool := pgPool(t)
	ctx := context.Background()
	schema := pgSchema(t, pool)
	var stores [2]*pgstore.Store
	for i, table := range []string{"cats", "dogs"} {
		stores[i] = pgMigrate(t, pgNew(t, pool, pgstore.WithSchema(schema), pgstore.WithTable(table)))
	}
	cat := pgAdd(t, stores[0], petstore.NewPet{Name: "Tom", CategoryID: 1})
	dog := pgAdd(t, stores[1], petstore.NewPet{Name: "Rex", CategoryID: 2})
	for i, want := range [][]petstore.Pet{{cat}, {dog}} {
		got, err := stores[i].List(ctx, petstore.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("store %d: List (-want +got):\n%s", i, diff)
		}
	}
}
