package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/internal/testkit/pgtest"
	"github.com/petstore-go/petstore/petstoretest"
)

// postgresSecret is the password in the URLs of the tests that check that
// it is never shown. The test server trusts local connections, so it
// ignores the password.
const postgresSecret = "pw-cmd-s3cret"

// postgresServerURL returns the URL of the PostgreSQL server to test
// against, or skips the test (fails it under CI=true) without one.
func postgresServerURL(t *testing.T) string { return pgtest.URL(t) }

// postgresConn returns a connection to the test server, closed when the
// test ends.
func postgresConn(t *testing.T) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), postgresServerURL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// postgresSchema creates a schema that no other test uses, dropped with
// everything in it when the test ends, and returns the server's URL with
// the schema as search_path and postgresSecret as password, so that a
// server started on it keeps its pets there.
func postgresSchema(t *testing.T) (schema, serverURL string) {
	t.Helper()
	base := postgresServerURL(t)
	ctx := context.Background()
	admin, err := pgxpool.New(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(admin.Close)
	b := make([]byte, 8)
	rand.Read(b)
	schema = "petstore_cmd_test_" + hex.EncodeToString(b)
	if _, err := admin.Exec(ctx, "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := admin.Exec(context.Background(), "DROP SCHEMA "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
			t.Errorf("dropping schema %s: %v", schema, err)
		}
	})
	u, err := url.Parse(base)
	if err != nil || u.Scheme == "" {
		t.Fatalf("%s must be a postgres:// URL for these tests: %v", postgresURLVar, err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	u.User = url.UserPassword(u.User.Username(), postgresSecret)
	return schema, u.String()
}

// postgresCount returns the number of pets in the pets table of schema.
func postgresCount(t *testing.T, schema string) int {
	t.Helper()
	ctx := context.Background()
	conn := postgresConn(t)
	var n int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM "+pgx.Identifier{schema, "pets"}.Sanitize()).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestPostgresConfig(t *testing.T) {
	const flagURL, envURL = "postgres://flag@db/a", "postgres://env@db/b"
	tests := []struct {
		name string
		args []string
		env  string
		want string
	}{
		{"neither", nil, "", ""},
		{"flag", []string{"-postgres", flagURL}, "", flagURL},
		{"environment", nil, envURL, envURL},
		{"flag wins", []string{"-postgres", flagURL}, envURL, flagURL},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			getenv := func(k string) string {
				if k == postgresURLVar {
					return tt.env
				}
				return ""
			}
			c, err := parseConfig(tt.args, getenv, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, c.postgresURL); diff != "" {
				t.Errorf("postgresURL (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPostgresHelpHidesURL checks that -help does not print the URL from
// the environment, which carries a password, as the flag's default.
func TestPostgresHelpHidesURL(t *testing.T) {
	var out bytes.Buffer
	getenv := func(k string) string {
		if k == postgresURLVar {
			return "postgres://app:" + postgresSecret + "@db/shop"
		}
		return ""
	}
	if _, err := parseConfig([]string{"-help"}, getenv, &out); err == nil {
		t.Fatal("parseConfig(-help) succeeded; want flag.ErrHelp")
	}
	if !strings.Contains(out.String(), "-postgres URL") {
		t.Errorf("-help does not document -postgres:\n%s", out.String())
	}
	if strings.Contains(out.String(), postgresSecret) {
		t.Errorf("-help shows the password:\n%s", out.String())
	}
}

// TestPostgresErrorsHidePassword starts the server on PostgreSQL URLs that
// are malformed or point nowhere, and checks that it fails with an error
// that says why and shows no password, in its error or its log.
func TestPostgresErrorsHidePassword(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := ln.Addr().String()
	ln.Close()
	s := postgresSecret
	tests := []struct {
		name, url, want string
	}{
		{"refused", "postgres://app:" + s + "@" + refused + "/shop?sslmode=disable", "connection refused"},
		{"refused, password in query", "postgres://app@" + refused + "/shop?sslmode=disable&password=" + s, "connection refused"},
		{"refused, key-value", "host=127.0.0.1 port=" + strings.Split(refused, ":")[1] + " user=app password=" + s + " sslmode=disable", "connection refused"},
		{"bad port", "postgres://app:" + s + "@127.0.0.1:notaport/shop", "not valid"},
		{"bad sslmode", "postgres://app:" + s + "@127.0.0.1/shop?sslmode=sometimes", "not valid"},
		{"slash in password", "postgres://app:" + s + "/" + s + "@127.0.0.1:notaport/shop", "not valid"},
		{"at sign in password", "postgres://app:" + s + "@" + s + "@127.0.0.1:notaport/shop", "not valid"},
		{"colon in password", "postgres://app:" + s + ":" + s + "@127.0.0.1:5432:5433/shop", "not valid"},
		{"at sign in password, refused", "postgres://app:" + s + "@" + s + "@" + refused + "/shop?sslmode=disable", "failed to connect"},
		{"key-value, bad port", "host=127.0.0.1 port=nope user=app password='" + s + " x' sslmode=disable", "not valid"},
		{"unknown scheme", "mysql://app:" + s + "@127.0.0.1/shop", "not valid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			getenv := func(k string) string {
				if k == "PETSTORE_API_KEYS" {
					return "key"
				}
				return ""
			}
			err := run(context.Background(), []string{"-addr", "127.0.0.1:0", "-postgres", tt.url}, getenv, &stdout, &stderr)
			if err == nil {
				t.Fatal("run succeeded; want an error")
			}
			t.Logf("err = %v", err)
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not say %q", err, tt.want)
			}
			for what, text := range map[string]string{"error": err.Error(), "stdout": stdout.String(), "stderr": stderr.String()} {
				if strings.Contains(text, postgresSecret) {
					t.Errorf("the %s shows the password: %s", what, text)
				}
			}
		})
	}
}

// TestPostgresOpenLogsStore checks what openPostgres logs: where the pets
// are, without the password.
func TestPostgresOpenLogsStore(t *testing.T) {
	schema, serverURL := postgresSchema(t)
	var log bytes.Buffer
	store, closeStore, err := openPostgresStore(context.Background(), serverURL, "", true, slog.New(slog.NewTextHandler(&log, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer closeStore()
	if _, _, err := store.Add(context.Background(), petstore.NewPet{Name: "Rex", CategoryID: 1}, petstore.AddOptions{}); err != nil {
		t.Fatal(err)
	}
	if n := postgresCount(t, schema); n != 1 {
		t.Errorf("%s.pets holds %d pets; want 1", schema, n)
	}
	for _, want := range []string{"storing pets in PostgreSQL", "host=127.0.0.1", "table=pets "} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("the log does not say %s:\n%s", want, log.String())
		}
	}
	if strings.Contains(log.String(), postgresSecret) {
		t.Errorf("the log shows the password:\n%s", log.String())
	}
}

// postgresClient is the HTTP client of the process tests.
func postgresClient() *http.Client { return &http.Client{Timeout: 30 * time.Second} }

// postgresCreate creates p through the server at baseURL and returns it as
// created.
func postgresCreate(client *http.Client, baseURL, key string, p petstore.NewPet) (petstore.Pet, error) {
	body, err := json.Marshal(p)
	if err != nil {
		return petstore.Pet{}, err
	}
	req, err := http.NewRequest(http.MethodPost, baseURL+"/pets", bytes.NewReader(body))
	if err != nil {
		return petstore.Pet{}, err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return petstore.Pet{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return petstore.Pet{}, err
	}
	if resp.StatusCode != http.StatusCreated {
		return petstore.Pet{}, fmt.Errorf("POST /pets: %s: %s", resp.Status, b)
	}
	var created petstore.Pet
	err = json.Unmarshal(b, &created)
	return created, err
}

// postgresNextLink matches the Link header value that points to the next
// page.
var postgresNextLink = regexp.MustCompile(`<([^>]*)>\s*;\s*rel="next"`)

// postgresListAll pages through every pet that the server at baseURL
// lists, following the Link headers, and returns them in the order listed.
func postgresListAll(client *http.Client, baseURL, key string) ([]petstore.Pet, error) {
	var all []petstore.Pet
	next, err := url.Parse(baseURL + "/pets?limit=100")
	if err != nil {
		return nil, err
	}
	for pages := 0; next != nil; pages++ {
		if pages > 10000 {
			return nil, fmt.Errorf("more than 10000 pages; the Link headers loop")
		}
		req, err := http.NewRequest(http.MethodGet, next.String(), nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := client.Do(req)
		if err != nil {
			return nil, err
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("GET %s: %s: %s", next, resp.Status, b)
		}
		var page []petstore.Pet
		if err := json.Unmarshal(b, &page); err != nil {
			return nil, fmt.Errorf("GET %s: %v", next, err)
		}
		all = append(all, page...)
		m := postgresNextLink.FindStringSubmatch(resp.Header.Get("Link"))
		if m == nil {
			break
		}
		ref, err := url.Parse(m[1])
		if err != nil {
			return nil, err
		}
		next = next.ResolveReference(ref)
	}
	return all, nil
}

// TestPostgresProcesses runs cmd/petstore as a process on PostgreSQL: the
// HTTP suite against one process, then two processes sharing one table.
func TestPostgresProcesses(t *testing.T) {
	postgresServerURL(t)
	bin := buildServer(t)

	t.Run("HTTPSuite", func(t *testing.T) {
		const key = "postgres-suite-key"
		schema, serverURL := postgresSchema(t)
		p := startServer(t, bin, key, []string{postgresURLVar + "=" + serverURL})
		petstoretest.TestServer(t, petstoretest.Endpoint{BaseURL: p.baseURL, APIKey: key, Client: postgresClient()})

		// The pets are in PostgreSQL, not in the process's memory.
		if n := postgresCount(t, schema); n == 0 {
			t.Errorf("%s.pets is empty after the suite; the server did not store pets in PostgreSQL", schema)
		}
		log := p.stderr.String()
		if !strings.Contains(log, "storing pets in PostgreSQL") {
			t.Errorf("the log does not say that pets are stored in PostgreSQL:\n%s", log)
		}
		if strings.Contains(log, postgresSecret) {
			t.Errorf("the log shows the password:\n%s", log)
		}
	})

	t.Run("TwoProcesses", func(t *testing.T) {
		const key = "postgres-two-key"
		_, serverURL := postgresSchema(t)
		// Both start, and migrate, at once; one through the flag, the other
		// through the environment.
		var (
			procs    [2]*serverProcess
			startErr [2]error
			wg       sync.WaitGroup
		)
		wg.Go(func() { procs[0], startErr[0] = startServerErr(t, bin, key, nil, "-postgres", serverURL) })
		wg.Go(func() {
			procs[1], startErr[1] = startServerErr(t, bin, key, []string{postgresURLVar + "=" + serverURL})
		})
		wg.Wait()
		for i, err := range startErr {
			if err != nil {
				t.Fatalf("process %d: %v", i, err)
			}
		}

		const writers, perWriter = 8, 50
		client := postgresClient()
		var (
			mu      sync.Mutex
			created []petstore.Pet
			errs    = make(chan error, writers)
		)
		for w := range writers {
			wg.Go(func() {
				p := procs[w%len(procs)]
				for i := range perWriter {
					pet, err := postgresCreate(client, p.baseURL, key, petstore.NewPet{
						Name:       fmt.Sprintf("writer %d pet %d", w, i),
						CategoryID: int64(w + 1),
						Status:     []petstore.Status{"", petstore.StatusAvailable, petstore.StatusPending, petstore.StatusSold}[i%4],
					})
					if err != nil {
						errs <- fmt.Errorf("writer %d through process %d: %w", w, w%len(procs), err)
						return
					}
					mu.Lock()
					created = append(created, pet)
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		if t.Failed() {
			t.FailNow()
		}
		slices.SortFunc(created, func(a, b petstore.Pet) int { return int(a.ID - b.ID) })
		for i := 1; i < len(created); i++ {
			if created[i].ID == created[i-1].ID {
				t.Errorf("ID %d was given to two pets: %v and %v", created[i].ID, created[i-1], created[i])
			}
		}
		for i, p := range procs {
			listed, err := postgresListAll(client, p.baseURL, key)
			if err != nil {
				t.Fatalf("process %d: %v", i, err)
			}
			if diff := cmp.Diff(created, listed); diff != "" {
				t.Errorf("process %d lists, page by page (-created +listed):\n%s", i, diff)
			}
		}
	})
}
