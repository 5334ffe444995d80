package pgstore_test

import (
	"context"
	"errors"
	"fmt"
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
	rows, err := pool.Query(context.Background(),
		"SELECT version, name FROM "+pgx.Identifier{schema, table + "_migrations"}.Sanitize()+" ORDER BY version")
	if err != nil {
		t.Fatal(err)
	}
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

func TestMigrateCreatesTable(t *testing.T) {
	pool := pgPool(t)
	ctx := context.Background()
	schema := pgSchema(t, pool)
	s := pgNew(t, pool, pgstore.WithSchema(schema))
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}

	type column struct {
		Name, Type, Nullable, Identity string
	}
	rows, err := pool.Query(ctx, `SELECT column_name::text, data_type::text, is_nullable::text, coalesce(identity_generation, '')::text
FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'pets' ORDER BY ordinal_position`, schema)
	if err != nil {
		t.Fatal(err)
	}
	columns, err := pgx.CollectRows(rows, pgx.RowToStructByPos[column])
	if err != nil {
		t.Fatal(err)
	}
	wantColumns := []column{
		{"id", "bigint", "NO", "ALWAYS"},
		{"name", "text", "NO", ""},
		{"category_id", "bigint", "NO", ""},
		{"status", "text", "YES", ""},
	}
	if diff := cmp.Diff(wantColumns, columns); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}

	rows, err = pool.Query(ctx, `SELECT indexdef FROM pg_indexes WHERE schemaname = $1 AND tablename = 'pets' ORDER BY indexname`, schema)
	if err != nil {
		t.Fatal(err)
	}
	indexes, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	wantIndexes := []string{
		fmt.Sprintf("CREATE UNIQUE INDEX pets_pkey ON %s.pets USING btree (id)", schema),
		fmt.Sprintf("CREATE INDEX pets_status_id_idx ON %s.pets USING btree (status, id)", schema),
	}
	if diff := cmp.Diff(wantIndexes, indexes); diff != "" {
		t.Errorf("indexes (-want +got):\n%s", diff)
	}

	if diff := cmp.Diff(migrateWant(), migrateVersions(t, pool, schema, "pets")); diff != "" {
		t.Errorf("migrations table (-want +got):\n%s", diff)
	}

	// The database, not only the handler, refuses an unknown status.
	_, err = pool.Exec(ctx, "INSERT INTO "+s.Table()+" (name, category_id, status) VALUES ('Rex', 1, 'lost')")
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "23514" {
		t.Errorf("inserting status 'lost': err = %v; want a check_violation (23514)", err)
	}
}

func TestMigrateIsIdempotent(t *testing.T) {
	pool := pgPool(t)
	ctx := context.Background()
	schema := pgSchema(t, pool)
	s := pgNew(t, pool, pgstore.WithSchema(schema))
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	added, _, err := s.Add(ctx, petstore.NewPet{Name: "Rex", CategoryID: 1}, petstore.AddOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := s.Migrate(ctx); err != nil {
			t.Fatalf("second Migrate: %v", err)
		}
	}
	got, err := s.List(ctx, petstore.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]petstore.Pet{added}, got); diff != "" {
		t.Errorf("pets after migrating again (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(migrateWant(), migrateVersions(t, pool, schema, "pets")); diff != "" {
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
	s := pgNew(t, pool)
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Add(ctx, petstore.NewPet{Name: "Rex", CategoryID: 1}, petstore.AddOptions{}); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := admin.QueryRow(ctx, "SELECT count(*) FROM "+pgx.Identifier{schema, "pets"}.Sanitize()).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
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
		s := pgNew(t, pool, pgstore.WithSchema(schema), pgstore.WithTable(table))
		if err := s.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		stores[i] = s
	}
	cat, _, err := stores[0].Add(ctx, petstore.NewPet{Name: "Tom", CategoryID: 1}, petstore.AddOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dog, _, err := stores[1].Add(ctx, petstore.NewPet{Name: "Rex", CategoryID: 2}, petstore.AddOptions{})
	if err != nil {
		t.Fatal(err)
	}
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
