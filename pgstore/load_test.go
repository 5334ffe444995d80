package pgstore_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/client"
	"github.com/petstore-go/petstore/internal/testkit/loadtest"
	"github.com/petstore-go/petstore/pgstore"
)

// TestLoad has 64 concurrent clients make 100,000 creates, mixed with lists
// and gets, through a real server on loopback onto a Store in a fresh
// schema, then checks that every acknowledged pet is stored exactly once
// with the fields it was created with, and nothing else is.
// PETSTORE_LOAD_CREATES changes the number of creates.
func TestLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping the 100,000-create load test in -short mode; run go test without -short for it")
	}
	pool := pgPool(t, func(c *pgxpool.Config) { c.MaxConns = 16 })
	store := pgStore(t, pool)
	loadtest.TestStore(t, fmt.Sprintf("pgstore (table %s, pool of %d)", store.Table(), pool.Config().MaxConns), store)
}

// The environment variables that make TestLoadServer serve, on the schema
// that the first holds, reading from the standby at the URL that the
// second holds; and the API key of the load servers.
const (
	loadServerVar  = "PGSTORE_LOAD_SERVER_SCHEMA"
	loadReplicaVar = "PGSTORE_LOAD_SERVER_REPLICA"
	loadKey        = "load-two-key"
)

// TestLoadTwoProcesses makes the load of TestLoad through two server
// processes that share one table, each with its own pool and Store, the
// clients' requests alternating between them. Meanwhile a reader pages
// through the table with a cursor, and must see every pet exactly once:
// IDs are in commit order across the processes. Afterwards the load test
// checks every acknowledged pet, as TestLoad does.
func TestLoadTwoProcesses(t *testing.T) {
	store := pgStore(t, pgPool(t, func(c *pgxpool.Config) { c.MaxConns = 4 }))
	loadTwoProcesses(t, store, store, strings.Split(store.Table(), `"`)[1], loadtest.Config{Clients: 64, Creates: loadtest.Creates(t)})
}

// loadTwoProcesses runs the load c through two server processes on the
// table in schema, with env added to their environment, the requests
// alternating between them, while reader pages through the table; then it
// checks that every create was acknowledged and verified, that both
// processes served, and that the reader saw every pet that primary lists
// exactly once.
func loadTwoProcesses(t *testing.T, reader, primary *pgstore.Store, schema string, c loadtest.Config, env ...string) {
	t.Helper()
	front, served := loadFront(t, loadStartServer(t, schema, env...), loadStartServer(t, schema, env...))
	ctx, cancel := context.WithTimeout(context.Background(), loadtest.Bound(t))
	defer cancel()
	var done atomic.Bool
	paging := make(chan map[int64]int, 1)
	go func() { paging <- loadPage(ctx, t, reader, &done) }()
	c.BaseURL, c.APIKey = front.URL+petstore.DefaultBasePath, loadKey
	r := loadtest.Run(ctx, t, c)
	done.Store(true)
	seen := <-paging
	t.Logf("pgstore, two processes on table %s, %d clients: %v; the processes served %d and %d requests",
		primary.Table(), c.Clients, r, served[0].Load(), served[1].Load())
	if r.Created != c.Creates || r.Verified != c.Creates {
		t.Errorf("%d creates: %d acknowledged, %d verified; want all of them", c.Creates, r.Created, r.Verified)
	}
	all := pgList(t, primary, petstore.ListOptions{})
	missed := 0
	for _, p := range all {
		if seen[p.ID] != 1 {
			if missed++; missed <= 10 {
				t.Errorf("the reader paging during the load saw pet %d %d times; want once", p.ID, seen[p.ID])
			}
		}
	}
	if missed > 0 || len(seen) != len(all) {
		t.Errorf("the reader saw %d pets, %d of them not exactly once; the table holds %d", len(seen), missed, len(all))
	}
	if served[0].Load() == 0 || served[1].Load() == 0 {
		t.Errorf("the processes served %d and %d requests; want both to serve", served[0].Load(), served[1].Load())
	}
}

// loadFront serves, on loopback, a proxy that sends the requests to the
// two backends in turn, and counts the requests that each was sent. It is
// closed when the test ends.
func loadFront(t *testing.T, backends ...*url.URL) (*httptest.Server, *[2]atomic.Int64) {
	var next atomic.Int64
	served := new([2]atomic.Int64)
	front := httptest.NewServer(&httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			i := next.Add(1) % 2
			served[i].Add(1)
			r.SetURL(backends[i])
		},
		Transport: &http.Transport{MaxIdleConnsPerHost: 128, IdleConnTimeout: time.Minute},
	})
	t.Cleanup(front.Close)
	return front, served
}

// loadPage pages through store with a cursor, 50 pets a page, until done is
// set and a page comes back empty, and returns how often it saw each ID.
func loadPage(ctx context.Context, t *testing.T, store *pgstore.Store, done *atomic.Bool) map[int64]int {
	seen := map[int64]int{}
	var after int64
	for ctx.Err() == nil {
		finished := done.Load()
		page, err := store.List(ctx, petstore.ListOptions{After: after, Limit: 50})
		if err != nil {
			t.Errorf("paging during the load: %v", err)
			return seen
		}
		for _, p := range page {
			seen[p.ID]++
			after = p.ID
		}
		if len(page) == 0 && finished {
			return seen
		} else if len(page) == 0 {
			time.Sleep(time.Millisecond)
		}
	}
	return seen
}

// loadStartServer runs this test binary as a server process on the table
// in schema, with the variables in env added to its environment, and
// returns its base URL. The process ends when the test does.
func loadStartServer(t *testing.T, schema string, env ...string) *url.URL {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestLoadServer$", "-test.count=1")
	cmd.Env = append(append(os.Environ(), loadServerVar+"="+schema), env...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	must(t, err)
	stdout, err := cmd.StdoutPipe()
	must(t, err)
	must(t, cmd.Start())
	exited := make(chan error, 1)
	t.Cleanup(func() {
		stdin.Close() // the server's signal to end
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("server process: %v", err)
			}
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			t.Errorf("the server process did not end within 10s of its input closing; killed it")
			<-exited
		}
	})
	lines := bufio.NewScanner(stdout)
	addr := make(chan string, 1)
	go func() {
		for lines.Scan() {
			if a, ok := strings.CutPrefix(lines.Text(), "listening on "); ok {
				addr <- a
				break
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
		exited <- cmd.Wait()
	}()
	select {
	case a := <-addr:
		return &url.URL{Scheme: "http", Host: a}
	case <-time.After(30 * time.Second):
		t.Fatal("the server process did not say where it listens within 30s")
		return nil
	}
}

// TestLoadServer is the server process of TestLoadTwoProcesses: it serves
// the API on the table in the schema that PGSTORE_LOAD_SERVER_SCHEMA names,
// through a pool of 16 connections, on a free port of 127.0.0.1, until its
// standard input closes. When PGSTORE_LOAD_SERVER_REPLICA names the URL of
// a standby, it reads from it too. Without the schema it is skipped.
func TestLoadServer(t *testing.T) {
	schema := os.Getenv(loadServerVar)
	if schema == "" {
		t.Skip("the server process of TestLoadTwoProcesses, run by it")
	}
	pool := pgPool(t, func(c *pgxpool.Config) { c.MaxConns = 16 })
	opts := []pgstore.Option{pgstore.WithSchema(schema)}
	if u := os.Getenv(loadReplicaVar); u != "" {
		opts = append(opts, pgstore.WithReplicas(urlPool(t, u)))
	}
	store := pgNew(t, pool, opts...)
	defer store.Close()
	h, err := petstore.New(petstore.WithStore(store), petstore.WithAuthenticator(petstore.APIKeys(loadKey)))
	must(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	fmt.Printf("listening on %s\n", ln.Addr())
	_, _ = io.Copy(io.Discard, os.Stdin)
	must(t, srv.Shutdown(context.Background()))
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		t.Error(err)
	}
}

// TestLoadTwoProcessesKeyed makes keyed creates through the two server
// processes of TestLoadTwoProcesses, every create with a key of its own,
// and retries a share of them as a client does: at the same time through
// both processes (one stores the pet; the other replays it, or answers 409
// and is retried until it does), after the answer through the other
// process (a replay), and with another body (422). It then checks that
// every key stored exactly one pet, the one every answer named, with the
// fields it was created with, and that nothing else was stored.
// PETSTORE_LOAD_CREATES sets the number of keys, by default a tenth of
// TestLoad's creates.
func TestLoadTwoProcessesKeyed(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping the two-process keyed load test in -short mode; run go test without -short for it")
	}
	pool := pgPool(t, func(c *pgxpool.Config) { c.MaxConns = 4 })
	store := pgStore(t, pool)
	schema := strings.Split(store.Table(), `"`)[1]
	const clients = 32
	var backends [2]*client.Client
	for i := range backends {
		// Retried as a client does: 409 (the key is in use) and 503.
		c, err := client.New(loadStartServer(t, schema).String()+petstore.DefaultBasePath, client.WithAPIKey(loadKey), client.WithRetries(100),
			client.WithHTTPClient(&http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2 * clients, IdleConnTimeout: time.Minute}}))
		must(t, err)
		backends[i] = c
	}
	keys := loadtest.Creates(t)
	if os.Getenv(loadtest.EnvCreates) == "" {
		keys /= 10
	}
	ctx, cancel := context.WithTimeout(context.Background(), loadtest.Bound(t))
	defer cancel()
	var (
		next, replays atomic.Int64
		ids           = make([]int64, keys)
		wg            sync.WaitGroup
	)
	for range clients {
		wg.Go(func() {
			for k := int(next.Add(1)) - 1; k < keys && ctx.Err() == nil; k = int(next.Add(1)) - 1 {
				id, err := loadKeyed(ctx, backends, k, &replays)
				if err != nil {
					t.Errorf("key %d: %v", k, err)
					cancel()
					return
				}
				ids[k] = id
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	// Exactly one pet per key, the one its answers named, and no other.
	want := make([]petstore.Pet, keys)
	for k, id := range ids {
		want[k] = petstore.Pet{ID: id, NewPet: loadKeyedPet(k)}
	}
	byID := cmpopts.SortSlices(func(a, b petstore.Pet) bool { return a.ID < b.ID })
	if diff := cmp.Diff(want, pgList(t, store, petstore.ListOptions{}), byID); diff != "" {
		t.Errorf("%d keys: the pets their answers named, against the table (-want +got):\n%s", keys, diff)
	}
	t.Logf("pgstore, two processes on table %s, %d clients: %d keys, each stored once; %d replays",
		store.Table(), clients, keys, replays.Load())
	if replays.Load() == 0 {
		t.Error("no create was replayed; the retries did not reach a stored key")
	}
}

// loadKeyedPet returns the pet created with key number k.
func loadKeyedPet(k int) petstore.NewPet {
	return petstore.NewPet{
		Name:       fmt.Sprintf("keyed %d", k),
		CategoryID: int64(k%50 + 1),
		Status:     []petstore.Status{"", petstore.StatusAvailable, petstore.StatusPending, petstore.StatusSold}[k%4],
	}
}

// loadKeyed creates the pet of key number k through one of the backends,
// retries it as k selects, and returns the ID that every answer named.
func loadKeyed(ctx context.Context, backends [2]*client.Client, k int, replays *atomic.Int64) (int64, error) {
	key := fmt.Sprintf("load-key-%d", k)
	p := loadKeyedPet(k)
	first, second := backends[k%2], backends[(k+1)%2]
	create := func(c *client.Client) addResult {
		pet, replayed, err := c.Add(ctx, p, petstore.AddOptions{IdempotencyKey: key})
		if replayed {
			replays.Add(1)
		}
		return addResult{pet, replayed, err}
	}
	if k%4 == 1 { // through both processes at once
		results := make(chan addResult, 2)
		go func() { results <- create(first) }()
		go func() { results <- create(second) }()
		r1, r2 := <-results, <-results
		switch err := errors.Join(r1.err, r2.err); {
		case err != nil:
			return 0, err
		case r1.pet.ID != r2.pet.ID || r1.replayed == r2.replayed:
			return 0, fmt.Errorf("sent through both processes at once: answered pet %d (replayed %v) and pet %d (replayed %v); want one pet, stored once and replayed once",
				r1.pet.ID, r1.replayed, r2.pet.ID, r2.replayed)
		}
		return r1.pet.ID, nil
	}
	r := create(first)
	switch {
	case r.err != nil:
		return 0, r.err
	case r.replayed:
		return 0, fmt.Errorf("the first create was answered as a replay of pet %d", r.pet.ID)
	case k%4 == 0: // once
		return r.pet.ID, nil
	case k%4 == 2: // again, after the answer, through the other process
		if again := create(second); again.err != nil || again.pet.ID != r.pet.ID || !again.replayed {
			return 0, fmt.Errorf("the retry after pet %d was answered with pet %d, replayed %v, %v; want pet %d replayed", r.pet.ID, again.pet.ID, again.replayed, again.err, r.pet.ID)
		}
		return r.pet.ID, nil
	}
	// Another body with the same key: refused.
	other := p
	other.Name += " changed"
	if _, _, err := second.Add(ctx, other, petstore.AddOptions{IdempotencyKey: key}); !errors.Is(err, petstore.ErrIdempotencyKeyReused) {
		return 0, fmt.Errorf("another body with the key of pet %d: %v; want 422 idempotency_key_reused", r.pet.ID, err)
	}
	return r.pet.ID, nil
}
