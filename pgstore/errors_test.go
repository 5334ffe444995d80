package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/internal/testkit/pgtest"
	"github.com/petstore-go/petstore/pgstore"
)

// errorsPassword is the password in the connection strings of the tests
// that check that errors never show it.
const errorsPassword = "pw-errors-s3cret"

// errorsOp is one Store method, called with arguments that would succeed
// on a healthy database.
type errorsOp struct {
	name string
	call func(context.Context, *pgstore.Store) error
}

// errorsOps returns every Store method that talks to the database.
func errorsOps() []errorsOp {
	list := func(opts petstore.ListOptions) func(context.Context, *pgstore.Store) error {
		return func(ctx context.Context, s *pgstore.Store) error { _, err := s.List(ctx, opts); return err }
	}
	return []errorsOp{
		{"Add", func(ctx context.Context, s *pgstore.Store) error {
			_, _, err := s.Add(ctx, petstore.NewPet{Name: "Rex", CategoryID: 1}, petstore.AddOptions{})
			return err
		}},
		{"Get", func(ctx context.Context, s *pgstore.Store) error {
			if _, err := s.Get(ctx, 1); !errors.Is(err, petstore.ErrNotFound) {
				return err
			}
			return nil
		}},
		{"List", list(petstore.ListOptions{Limit: 20})},
		{"List by status", list(petstore.ListOptions{Status: petstore.StatusSold})},
		{"Migrate", func(ctx context.Context, s *pgstore.Store) error { return s.Migrate(ctx) }},
	}
}

// TestErrorsUnavailable checks that every method gives an error wrapping
// ErrUnavailable, which never shows the password, when the server refuses
// connections, never answers, or ends the store's connection (as a
// shutdown or a failover does: the next call works again), when the pool is
// closed, and when the server's statement_timeout ends the statement (an
// error that wraps no context error, as no context was done).
func TestErrorsUnavailable(t *testing.T) {
	ctx := context.Background()
	admin := pgPool(t)
	schema := pgSchema(t, admin)
	refused := pgtest.FreePort(t)
	// A port that accepts connections and never answers: connecting times
	// out.
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	defer silent.Close()
	go func() {
		var conns []net.Conn
		defer func() {
			for _, c := range conns {
				c.Close()
			}
		}()
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	}()
	at := func(url string) func(t *testing.T) *pgstore.Store {
		return func(t *testing.T) *pgstore.Store {
			return pgNew(t, urlPool(t, url, func(c *pgxpool.Config) { c.ConnConfig.ConnectTimeout = 200 * time.Millisecond }))
		}
	}
	for _, tt := range []struct {
		name           string
		store          func(t *testing.T) *pgstore.Store
		recovers       bool // the call after the failed one works
		timedOutServer bool // the error wraps no context error
	}{
		{name: "refused", store: at(fmt.Sprintf("postgres://app:%s@127.0.0.1:%d/shop?sslmode=disable", errorsPassword, refused))},
		{name: "timeout", store: at(fmt.Sprintf("postgres://app:%s@%s/shop?sslmode=disable", errorsPassword, silent.Addr()))},
		{name: "key-value", store: at(fmt.Sprintf("host=127.0.0.1 port=%d user=app password=%s dbname=shop sslmode=disable", refused, errorsPassword))},
		{name: "pool closed", store: func(t *testing.T) *pgstore.Store {
			closed := pgPool(t)
			s := pgMigrate(t, pgNew(t, closed, pgstore.WithSchema(schema)))
			closed.Close()
			return s
		}},
		{name: "server ends connection", recovers: true, store: func(t *testing.T) *pgstore.Store {
			pool := pgPool(t, func(c *pgxpool.Config) {
				c.MaxConns = 1
				// Without a ping before use, the query meets the broken
				// connection, as it would when the server goes away
				// between the ping and the query.
				c.ShouldPing = func(context.Context, pgxpool.ShouldPingParams) bool { return false }
			})
			s := pgMigrate(t, pgNew(t, pool, pgstore.WithSchema(schema)))
			var pid int32
			must(t, pool.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid))
			var ended bool
			if err := admin.QueryRow(ctx, "SELECT pg_terminate_backend($1, 10000)", pid).Scan(&ended); err != nil || !ended {
				t.Fatalf("pg_terminate_backend(%d) = %v, %v", pid, ended, err)
			}
			return s
		}},
		{name: "statement timeout", timedOutServer: true, store: func(t *testing.T) *pgstore.Store {
			return errorsLockedStore(t, admin, pgPool(t, func(c *pgxpool.Config) { c.ConnConfig.RuntimeParams["statement_timeout"] = "100ms" }))
		}},
	} {
		for _, op := range errorsOps() {
			t.Run(tt.name+"/"+op.name, func(t *testing.T) {
				s := tt.store(t)
				err := op.call(ctx, s)
				t.Logf("err = %v", err)
				if !errors.Is(err, petstore.ErrUnavailable) {
					t.Errorf("err = %v; want an error wrapping ErrUnavailable", err)
				}
				if err != nil && strings.Contains(err.Error(), errorsPassword) {
					t.Errorf("err = %q; it shows the password", err)
				}
				if tt.timedOutServer && (errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)) {
					t.Errorf("err = %v; it wraps a context error, but no context was done", err)
				}
				if tt.recovers {
					if err := op.call(ctx, s); err != nil {
						t.Errorf("after the pool reconnected: %v", err)
					}
				}
			})
		}
	}
}

// errorsLockedStore returns a migrated Store on pool, in a fresh schema,
// whose tables admin locks until the test ends, so that every query on them
// waits.
func errorsLockedStore(t *testing.T, admin, pool *pgxpool.Pool) *pgstore.Store {
	t.Helper()
	ctx := context.Background()
	schema := pgMigratedSchema(t, admin)
	s := pgNew(t, pool, pgstore.WithSchema(schema))
	tx, err := admin.Begin(ctx)
	must(t, err)
	t.Cleanup(func() { tx.Rollback(ctx) })
	tables := pgx.Identifier{schema, "pets"}.Sanitize() + ", " + pgx.Identifier{schema, "pets_migrations"}.Sanitize()
	_, err = tx.Exec(ctx, "LOCK TABLE "+tables+" IN ACCESS EXCLUSIVE MODE")
	must(t, err)
	return s
}

// TestErrorsWhenContextDone checks that a done context stops every method,
// before it queries and while its query waits, with an error wrapping
// ctx.Err().
func TestErrorsWhenContextDone(t *testing.T) {
	admin := pgPool(t)
	for _, op := range errorsOps() {
		t.Run(op.name+"/before", func(t *testing.T) {
			s := pgStore(t, admin)
			canceled, cancel := context.WithCancel(context.Background())
			cancel()
			expired, stop := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
			defer stop()
			for _, ctx := range []context.Context{canceled, expired} {
				if err := op.call(ctx, s); !errors.Is(err, ctx.Err()) {
					t.Errorf("err = %v; want an error wrapping %v", err, ctx.Err())
				}
			}
		})
		t.Run(op.name+"/waiting", func(t *testing.T) {
			pool, application := appPool(t)
			s := errorsLockedStore(t, admin, pool)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- op.call(ctx, s) }()
			pgAwait(t, admin, "the query to wait for the lock", `SELECT EXISTS (SELECT FROM pg_stat_activity
WHERE application_name = $1 AND state = 'active' AND wait_event_type = 'Lock')`, application)
			cancel()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Errorf("err = %v; want an error wrapping context.Canceled", err)
			}
		})
	}
}

// TestErrorsFromServerAreNotUnavailable checks that a mistake, such as a
// table that was never migrated, gives an error that is not ErrUnavailable:
// retrying would not help.
func TestErrorsFromServerAreNotUnavailable(t *testing.T) {
	pool := pgPool(t)
	s := pgNew(t, pool, pgstore.WithSchema("pgstore_test_never_created"))
	for _, op := range errorsOps()[:4] {
		t.Run(op.name, func(t *testing.T) {
			err := op.call(context.Background(), s)
			if err == nil || errors.Is(err, petstore.ErrUnavailable) {
				t.Fatalf("err = %v; want an error that is not ErrUnavailable", err)
			}
			if !strings.Contains(err.Error(), "does not exist") {
				t.Errorf("err = %q; want the server's reason", err)
			}
		})
	}
}
