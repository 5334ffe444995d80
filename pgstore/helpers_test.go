package pgstore_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/internal/testkit/pgtest"
	"github.com/petstore-go/petstore/pgstore"
)

// pgPool opens a pool on the test server (see urlPool).
func pgPool(tb testing.TB, configure ...func(*pgxpool.Config)) *pgxpool.Pool {
	tb.Helper()
	return urlPool(tb, pgtest.URL(tb), configure...)
}

// urlPool opens a pool of 8 connections on url, each given up after 2s of
// connecting, configured further by configure, and closed when the test
// ends.
func urlPool(tb testing.TB, url string, configure ...func(*pgxpool.Config)) *pgxpool.Pool {
	tb.Helper()
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		tb.Fatalf("%s: %v", url, err)
	}
	cfg.MaxConns = 8
	cfg.ConnConfig.ConnectTimeout = 2 * time.Second
	for _, f := range configure {
		f(cfg)
	}
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	must(tb, err)
	tb.Cleanup(pool.Close)
	return pool
}

// appPool returns a pool on the test server (see pgPool) whose connections
// carry an application name that no other pool has, and that name.
func appPool(t *testing.T, configure ...func(*pgxpool.Config)) (*pgxpool.Pool, string) {
	application := uniqueName("pgstore_test_")
	configure = append(configure, func(c *pgxpool.Config) { c.ConnConfig.RuntimeParams["application_name"] = application })
	return pgPool(t, configure...), application
}

// pgSchema returns the name of a schema that no other test uses, and drops
// it, with everything in it, when the test ends. It does not create it:
// Migrate does.
func pgSchema(tb testing.TB, pool *pgxpool.Pool) string {
	tb.Helper()
	schema := uniqueName("pgstore_test_")
	tb.Cleanup(func() {
		_, err := pool.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
		if err != nil {
			tb.Errorf("dropping schema %s: %v", schema, err)
		}
	})
	return schema
}

// uniqueName returns prefix followed by 26 random lowercase letters and
// digits: a name that no other test uses, and that needs no quoting.
func uniqueName(prefix string) string { return prefix + strings.ToLower(rand.Text()) }

// pgMigratedSchema returns a fresh schema (see pgSchema) with the Store's
// tables created in it through admin, whose statements have no timeout and
// which owns them: a Store on another pool, as another role, finds them
// ready.
func pgMigratedSchema(tb testing.TB, admin *pgxpool.Pool) string {
	tb.Helper()
	schema := pgSchema(tb, admin)
	pgMigrate(tb, pgNew(tb, admin, pgstore.WithSchema(schema)))
	return schema
}

// pgNew returns pgstore.New(pool, opts...), and fails tb on an error.
func pgNew(tb testing.TB, pool *pgxpool.Pool, opts ...pgstore.Option) *pgstore.Store {
	tb.Helper()
	s, err := pgstore.New(pool, opts...)
	must(tb, err)
	return s
}

// pgMigrate runs s.Migrate, fails tb on an error, and returns s.
func pgMigrate(tb testing.TB, s *pgstore.Store) *pgstore.Store {
	tb.Helper()
	must(tb, s.Migrate(context.Background()))
	return s
}

// pgStore returns a migrated Store on pool, in a fresh schema of its own.
func pgStore(tb testing.TB, pool *pgxpool.Pool, opts ...pgstore.Option) *pgstore.Store {
	tb.Helper()
	return pgMigrate(tb, pgNew(tb, pool, append([]pgstore.Option{pgstore.WithSchema(pgSchema(tb, pool))}, opts...)...))
}

// pgAdd adds p to s without a key, fails tb on an error, and returns the
// pet as stored.
func pgAdd(tb testing.TB, s petstore.Store, p petstore.NewPet) petstore.Pet {
	tb.Helper()
	pet, _, err := s.Add(context.Background(), p, petstore.AddOptions{})
	must(tb, err)
	return pet
}

// pgList returns s.List(opts), and fails tb on an error.
func pgList(tb testing.TB, s petstore.Store, opts petstore.ListOptions) []petstore.Pet {
	tb.Helper()
	pets, err := s.List(context.Background(), opts)
	must(tb, err)
	return pets
}

// pgExec runs sql on pool, and fails tb on an error.
func pgExec(tb testing.TB, pool *pgxpool.Pool, sql string, args ...any) {
	tb.Helper()
	if _, err := pool.Exec(context.Background(), sql, args...); err != nil {
		tb.Fatalf("%s: %v", sql, err)
	}
}

// must fails tb at once when err is not nil.
func must(tb testing.TB, err error) {
	if err != nil {
		tb.Helper()
		tb.Fatal(err)
	}
}

// pgCount returns the number of rows of from: a table, and optionally a
// WHERE clause.
func pgCount(tb testing.TB, pool *pgxpool.Pool, from string) int {
	tb.Helper()
	var n int
	must(tb, pool.QueryRow(context.Background(), "SELECT count(*) FROM "+from).Scan(&n))
	return n
}

// seedSQL inserts $1 pets into the table it is formatted with, in one
// statement, with the statuses available, pending, sold and none in turn.
const seedSQL = `INSERT INTO %s (name, category_id, status)
SELECT 'pet ' || g, g %% 100 + 1, (ARRAY['available', 'pending', 'sold', NULL])[g %% 4 + 1]
FROM generate_series(1, $1::bigint) AS g`

// pgSeed inserts n pets into the store's table (see seedSQL), and updates
// the planner's statistics.
func pgSeed(tb testing.TB, pool *pgxpool.Pool, s *pgstore.Store, n int) {
	tb.Helper()
	pgExec(tb, pool, fmt.Sprintf(seedSQL, s.Table()), n)
	pgExec(tb, pool, "ANALYZE "+s.Table())
}

// pgAwait runs query, which returns one boolean, on pool until it returns
// true (see eventually).
func pgAwait(tb testing.TB, pool *pgxpool.Pool, what, query string, args ...any) {
	tb.Helper()
	eventually(tb, what, func() bool {
		var ok bool
		must(tb, pool.QueryRow(context.Background(), query, args...).Scan(&ok))
		return ok
	})
}

// eventually calls cond every 10ms until it returns true, and fails the
// test if that takes more than ten seconds.
func eventually(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	for range 1000 {
		if cond() {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	tb.Fatalf("waited 10s for %s", what)
}
