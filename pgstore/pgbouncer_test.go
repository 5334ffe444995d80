package pgstore_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/internal/testkit/pgtest"
	"github.com/petstore-go/petstore/internal/testkit/watchbench"
	"github.com/petstore-go/petstore/petstoretest"
	"github.com/petstore-go/petstore/pgstore"
)

// bouncerMode is the pgx query mode that docs/postgres.md gives for a
// pooler in transaction mode: statements described once per connection and
// sent unnamed, so that none outlives its transaction.
const bouncerMode = "&default_query_exec_mode=cache_describe"

// pgBouncerPool opens a pool of 32 connections through a PgBouncer in
// transaction mode in front of the test server, in bouncerMode, closed
// when the test ends, and returns it with its URL.
func pgBouncerPool(t *testing.T) (*pgxpool.Pool, string) {
	t.Helper()
	url := pgtest.PgBouncer(t) + bouncerMode
	return urlPool(t, url, func(c *pgxpool.Config) { c.MaxConns = 32 }), url
}

// TestPgBouncer runs the conformance and durability suites, and the suite
// of a running server on a handler over such a Store, on Stores whose
// every statement goes through PgBouncer in transaction mode, where
// consecutive statements of one connection may reach different server
// sessions.
func TestPgBouncer(t *testing.T) {
	pool, url := pgBouncerPool(t)
	t.Run("Store", func(t *testing.T) {
		petstoretest.TestStore(t, func(t *testing.T) petstore.Store {
			return pgStore(t, pool)
		})
	})
	t.Run("Durability", func(t *testing.T) {
		petstoretest.TestDurability(t, func(t *testing.T) petstoretest.OpenFunc {
			return pgOpenFunc(pgSchema(t, pool), url)
		})
	})
	t.Run("Server", func(t *testing.T) {
		// Its creates, replays and pages are statements of their own.
		const key = "pgbouncer-test-key"
		h, err := petstore.New(petstore.WithStore(pgStore(t, pool)), petstore.WithAuthenticator(petstore.APIKeys(key)))
		must(t, err)
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		petstoretest.TestServer(t, petstoretest.Endpoint{BaseURL: srv.URL + petstore.DefaultBasePath, APIKey: key})
	})
}

// TestWatchAcrossPgBouncer checks that behind PgBouncer in transaction
// mode, which does not carry LISTEN, a Store given WithListenURL with the
// server's own URL wakes the watch streams of another Store, as
// TestWatchAcross does without PgBouncer.
func TestWatchAcrossPgBouncer(t *testing.T) {
	url := pgtest.PgBouncer(t) + bouncerMode
	schema := pgMigratedSchema(t, pgPool(t))
	var stores [2]*pgstore.Store
	for i := range stores {
		stores[i] = pgNew(t, urlPool(t, url), pgstore.WithSchema(schema), pgstore.WithListenURL(pgtest.URL(t)))
	}
	r, err := watchbench.Across(t.Context(), stores[0], stores[1], 20, 100, petstore.WithWatch(petstore.Watch{Poll: time.Hour}))
	must(t, err)
	t.Log(r)
}

// TestPgBouncerLoad has 32 callers create and 32 list, each as fast as it
// can, through PgBouncer in transaction mode, for 5 seconds (1 in -short
// mode), and fails on any error. Under the default query mode, which keeps
// prepared statements in the session, most of them fail.
func TestPgBouncerLoad(t *testing.T) {
	pool, _ := pgBouncerPool(t)
	s := pgStore(t, pool)
	d := 5 * time.Second
	if testing.Short() {
		d = time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var (
		wg                   sync.WaitGroup
		creates, lists, errs atomic.Int64
	)
	// run calls call in a loop of its own until the time is up, counting
	// its successes in done.
	run := func(done *atomic.Int64, call func(i int) error) {
		wg.Go(func() {
			for i := 0; ctx.Err() == nil; i++ {
				if err := call(i); err == nil {
					done.Add(1)
				} else if errs.Add(1) <= 5 {
					t.Error(err)
				}
			}
		})
	}
	for c := range 32 {
		run(&creates, func(i int) error {
			_, _, err := s.Add(context.Background(), petstore.NewPet{Name: fmt.Sprintf("caller %d pet %d", c, i), CategoryID: 1}, petstore.AddOptions{})
			return err
		})
		run(&lists, func(int) error {
			_, err := s.List(context.Background(), petstore.ListOptions{Limit: 20, Status: petstore.StatusAvailable})
			return err
		})
	}
	wg.Wait()
	t.Logf("through PgBouncer for %v: %d creates and %d lists answered, %d failed", d, creates.Load(), lists.Load(), errs.Load())
	if creates.Load() == 0 || lists.Load() == 0 {
		t.Errorf("%d creates and %d lists in %v; want some of each", creates.Load(), lists.Load(), d)
	}
}

// TestPgBouncerDefaultMode sends a Store's second Add, in pgx's default
// query mode, which keeps prepared statements in the server session, to
// another session than its first through PgBouncer in transaction mode,
// and wants its error to say how to configure the URL. PgBouncer has two
// server sessions, and the test holds each in a transaction of its own
// in turn, so that the Store's one connection meets the session it did
// not prepare its statements on.
func TestPgBouncerDefaultMode(t *testing.T) {
	bouncer := pgtest.PgBouncer(t, "default_pool_size = 2", "min_pool_size = 0")
	schema := pgMigratedSchema(t, pgPool(t))
	ctx := context.Background()
	hold := func() (pgx.Tx, uint32) {
		t.Helper()
		conn, err := pgx.Connect(ctx, bouncer)
		must(t, err)
		t.Cleanup(func() { conn.Close(ctx) })
		tx, err := conn.Begin(ctx)
		must(t, err)
		var pid uint32
		must(t, tx.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid))
		return tx, pid
	}
	first, firstPID := hold()
	s := pgNew(t, urlPool(t, bouncer, func(c *pgxpool.Config) { c.MaxConns = 1 }), pgstore.WithSchema(schema))
	pet := petstore.NewPet{Name: "Rex", CategoryID: 1}
	if _, _, err := s.Add(ctx, pet, petstore.AddOptions{}); err != nil {
		t.Fatalf("the first Add, on the one free session: %v", err)
	}
	_, secondPID := hold() // the session the Add prepared its statements on
	if secondPID == firstPID {
		t.Fatalf("both transactions through PgBouncer hold the session of pid %d; want one each of its two", firstPID)
	}
	must(t, first.Commit(ctx))
	_, _, err := s.Add(ctx, pet, petstore.AddOptions{})
	if err == nil {
		t.Fatal("the second Add, on the session the first did not prepare its statements on, succeeded; want it to fail")
	}
	if !strings.Contains(err.Error(), "add default_query_exec_mode=cache_describe to the database URL") {
		t.Errorf("Add through PgBouncer in the default query mode failed with %q; want it to say to add default_query_exec_mode=cache_describe", err)
	}
}

// pgOpenFunc returns a petstoretest.OpenFunc that opens a new pool on url
// and a Store on it in schema, migrated; closing it closes the pool.
func pgOpenFunc(schema, url string) petstoretest.OpenFunc {
	return func(t *testing.T) (petstore.Store, func() error) {
		pool := urlPool(t, url)
		return pgMigrate(t, pgNew(t, pool, pgstore.WithSchema(schema))), func() error {
			pool.Close() // waits for the connections in use to come back; a second Close does nothing
			return nil
		}
	}
}
