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
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/internal/loadtest"
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

// loadServerVar names the environment variable that makes TestLoadServer
// serve, on the schema it holds.
const loadServerVar = "PGSTORE_LOAD_SERVER_SCHEMA"

// loadKey is the API key of the load servers.
const loadKey = "load-two-key"

// TestLoadTwoProcesses makes the load of TestLoad through two server
// processes that share one table, each with its own pool and Store, the
// clients' requests alternating between them. Meanwhile a reader pages
// through the table with a cursor, and must see every pet exactly once:
// IDs are in commit order across the processes. Afterwards the load test
// checks every acknowledged pet, as TestLoad does.
func TestLoadTwoProcesses(t *testing.T) {
	pool := pgPool(t, func(c *pgxpool.Config) { c.MaxConns = 4 })
	store := pgStore(t, pool)
	schema := strings.Split(store.Table(), `"`)[1]
	backends := []*url.URL{loadStartServer(t, schema), loadStartServer(t, schema)}

	var next, served [2]atomic.Int64
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			i := next[0].Add(1) % 2
			served[i].Add(1)
			r.SetURL(backends[i])
		},
		Transport: &http.Transport{MaxIdleConnsPerHost: 128, IdleConnTimeout: time.Minute},
	}
	front := httptest.NewServer(proxy)
	defer front.Close()

	ctx, cancel := context.WithTimeout(context.Background(), loadtest.Bound(t))
	defer cancel()
	var (
		done   atomic.Bool
		paging = make(chan map[int64]int, 1)
	)
	go func() { paging <- loadPage(ctx, t, store, &done) }()
	c := loadtest.Config{
		BaseURL: front.URL + petstore.DefaultBasePath,
		APIKey:  loadKey,
		Clients: 64,
		Creates: loadtest.Creates(t),
	}
	r := loadtest.Run(ctx, t, c)
	done.Store(true)
	seen := <-paging
	t.Logf("pgstore, two processes on table %s, %d clients: %v; the processes served %d and %d requests",
		store.Table(), c.Clients, r, served[0].Load(), served[1].Load())
	if r.Created != c.Creates || r.Verified != c.Creates {
		t.Errorf("%d creates: %d acknowledged, %d verified; want all of them", c.Creates, r.Created, r.Verified)
	}
	all, err := store.List(ctx, petstore.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	missed := 0
	for _, p := range all {
		if seen[p.ID] != 1 {
			missed++
			if missed <= 10 {
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

// loadPage pages through store with a cursor, 50 pets a page, until done is
// set and a page comes back empty, and returns how often it saw each ID.
func loadPage(ctx context.Context, t *testing.T, store *pgstore.Store, done *atomic.Bool) map[int64]int {
	seen := map[int64]int{}
	var (
		after int64
		page  []petstore.Pet
		err   error
	)
	for ctx.Err() == nil {
		finished := done.Load()
		page, err = store.List(ctx, petstore.ListOptions{After: after, Limit: 50})
		if err != nil {
			t.Errorf("paging during the load: %v", err)
			return seen
		}
		for _, p := range page {
			seen[p.ID]++
			after = p.ID
		}
		if len(page) == 0 {
			if finished {
				return seen
			}
			time.Sleep(time.Millisecond)
		}
	}
	return seen
}

// loadStartServer runs this test binary as a server process on the table
// in schema, and returns its base URL. The process ends when the test
// does.
func loadStartServer(t *testing.T, schema string) *url.URL {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestLoadServer$", "-test.count=1")
	cmd.Env = append(os.Environ(), loadServerVar+"="+schema)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
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
// standard input closes. Without the variable it is skipped.
func TestLoadServer(t *testing.T) {
	schema := os.Getenv(loadServerVar)
	if schema == "" {
		t.Skip("the server process of TestLoadTwoProcesses, run by it")
	}
	pool := pgPool(t, func(c *pgxpool.Config) { c.MaxConns = 16 })
	store, err := pgstore.New(pool, pgstore.WithSchema(schema))
	if err != nil {
		t.Fatal(err)
	}
	h, err := petstore.New(petstore.WithStore(store), petstore.WithAuthenticator(petstore.APIKeys(loadKey)))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	fmt.Printf("listening on %s\n", ln.Addr())
	_, _ = io.Copy(io.Discard, os.Stdin)
	if err := srv.Shutdown(context.Background()); err != nil {
		t.Error(err)
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		t.Error(err)
	}
}
