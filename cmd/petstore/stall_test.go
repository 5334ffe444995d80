package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"
	"github.com/petstore-go/petstore"
)

// defaultStoreTimeout is the deadline of a store call in a server started
// without one set: the handler's default.
const defaultStoreTimeout = 5 * time.Second

// TestPostgresLockedTable runs the server on PostgreSQL with its pets table
// held under an exclusive lock: creates and reads answer 503 with
// Retry-After within the store deadline and a second, and log that the
// store timed out; no create that was answered so is stored, with or
// without an Idempotency-Key; a client that hangs up meanwhile is not
// logged as a failure; and once the lock goes, the server serves again.
func TestPostgresLockedTable(t *testing.T) {
	postgresServerURL(t)
	bin := buildServer(t)
	const key = "postgres-locked-key"
	schema, serverURL := postgresSchema(t)
	p := startServer(t, bin, key, nil, "-postgres", serverURL)
	client := postgresClient()
	ctx := context.Background()

	rex, err := postgresCreate(client, p.baseURL, key, petstore.NewPet{Name: "Rex", CategoryID: 1})
	if err != nil {
		t.Fatal(err)
	}

	locker, err := pgx.Connect(ctx, postgresServerURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer locker.Close(ctx)
	table := pgx.Identifier{schema, "pets"}.Sanitize()
	tx, err := locker.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "LOCK TABLE "+table+" IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}

	// A client that hangs up while its read waits for the lock.
	hangUp := make(chan error, 1)
	go func() {
		hctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		defer cancel()
		req, err := newGet(hctx, p.baseURL, key, "/pets")
		if err != nil {
			hangUp <- err
			return
		}
		a, err := do(client, req)
		if err == nil {
			err = fmt.Errorf("the server answered a client that hung up: %v", a)
		} else if errors.Is(err, context.DeadlineExceeded) {
			err = nil
		}
		hangUp <- err
	}()

	type call struct {
		name, op string // the request, and the operation it logs
		req      func() (*http.Request, error)
	}
	calls := []call{
		{"POST", "createPet", func() (*http.Request, error) {
			return newCreate(ctx, p.baseURL, key, "", petstore.NewPet{Name: "stalled plain", CategoryID: 2})
		}},
		{"POST with Idempotency-Key", "createPet", func() (*http.Request, error) {
			return newCreate(ctx, p.baseURL, key, "stalled-key", petstore.NewPet{Name: "stalled keyed", CategoryID: 3})
		}},
		{"GET /pets", "listPets", func() (*http.Request, error) { return newGet(ctx, p.baseURL, key, "/pets") }},
		{"GET /pets/{petId}", "getPet", func() (*http.Request, error) {
			return newGet(ctx, p.baseURL, key, "/pets/"+strconv.FormatInt(rex.ID, 10))
		}},
	}
	const bound = defaultStoreTimeout + time.Second
	var wg sync.WaitGroup
	for _, c := range calls {
		wg.Go(func() {
			req, err := c.req()
			if err != nil {
				t.Error(err)
				return
			}
			start := time.Now()
			a, err := do(client, req)
			took := time.Since(start)
			if err != nil {
				t.Errorf("%s, table locked: %v after %v", c.name, err, took)
				return
			}
			t.Logf("%s, table locked: %d %s after %v", c.name, a.status, a.code(), took.Round(time.Millisecond))
			if a.status != http.StatusServiceUnavailable || a.code() != "unavailable" || a.header.Get("Retry-After") == "" {
				t.Errorf("%s, table locked: %v; want 503 unavailable with Retry-After", c.name, a)
			}
			if took > bound {
				t.Errorf("%s, table locked: answered after %v; want within %v", c.name, took, bound)
			}
		})
	}
	wg.Wait()
	if err := <-hangUp; err != nil {
		t.Errorf("the client that hung up: %v", err)
	}

	// The creates' statements were cancelled in the server, not left waiting
	// for the lock to commit when it goes.
	waiting := lockWaiters(t, locker, table)
	t.Logf("statements waiting for the lock after the 503s: %q", waiting)
	for _, q := range waiting {
		if strings.Contains(q, "INSERT") {
			t.Errorf("a create's statement still waits for the lock after its 503: %s", q)
		}
	}

	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	// Whatever still waited for the lock has run by now.
	deadline := time.Now().Add(10 * time.Second)
	for len(lockWaiters(t, locker, table)) > 0 || activeOn(t, locker, table) {
		if time.Now().After(deadline) {
			t.Fatalf("statements on %s still run 10s after the lock went", table)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if pets, _ := postgresNamed(t, schema, "stalled%"); pets != 0 {
		t.Errorf("%d pets of the creates answered 503 are in the table; want none", pets)
	}

	// Service resumes; the key of the create that failed was not kept.
	after, err := postgresCreate(client, p.baseURL, key, petstore.NewPet{Name: "after the lock", CategoryID: 4})
	if err != nil {
		t.Errorf("create after the lock: %v", err)
	}
	req, err := newCreate(ctx, p.baseURL, key, "stalled-key", petstore.NewPet{Name: "stalled keyed", CategoryID: 3})
	if err != nil {
		t.Fatal(err)
	}
	if a, err := do(client, req); err != nil || a.status != http.StatusCreated || a.replayed() {
		t.Errorf("the create with the key of the one answered 503, again after the lock: %v, %v; want 201, not replayed", a, err)
	}
	for _, path := range []string{"/pets", "/pets/" + strconv.FormatInt(after.ID, 10)} {
		req, err := newGet(ctx, p.baseURL, key, path)
		if err != nil {
			t.Fatal(err)
		}
		if a, err := do(client, req); err != nil || a.status != http.StatusOK {
			t.Errorf("GET %s after the lock: %v, %v; want 200", path, a, err)
		}
	}
	if pets, _ := postgresNamed(t, schema, "stalled%"); pets != 1 {
		t.Errorf("%d pets named stalled*; want the 1 created after the lock", pets)
	}

	// One WARN per request answered 503, naming its operation, and none for
	// the client that hung up.
	var ops []string
	for _, line := range warnings(p.stderr.String()) {
		m := storeTimedOut.FindStringSubmatch(line)
		if m == nil {
			t.Errorf("the server logged %s; want only store time-outs", line)
			continue
		}
		ops = append(ops, m[1])
	}
	slices.Sort(ops)
	if diff := cmp.Diff([]string{"createPet", "createPet", "getPet", "listPets"}, ops); diff != "" {
		t.Errorf("operations logged as timed out (-want +got):\n%s\nlog:\n%s", diff, p.stderr)
	}
}

// storeTimedOut matches the WARN line of a store call past its deadline and
// captures the operation.
var storeTimedOut = regexp.MustCompile(`level=WARN msg="petstore: store timed out" operation=(\w+) `)

// lockWaiters returns the statements that wait for a lock on table.
func lockWaiters(t *testing.T, conn *pgx.Conn, table string) []string {
	t.Helper()
	rows, err := conn.Query(context.Background(), `SELECT a.query FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
WHERE l.relation = $1::regclass AND NOT l.granted`, table)
	if err != nil {
		t.Fatal(err)
	}
	queries, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return queries
}

// activeOn reports whether a session other than conn's holds a lock on
// table while it runs a statement.
func activeOn(t *testing.T, conn *pgx.Conn, table string) bool {
	t.Helper()
	var n int
	err := conn.QueryRow(context.Background(), `SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
WHERE l.relation = $1::regclass AND a.state = 'active' AND a.pid <> pg_backend_pid()`, table).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n > 0
}
