package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"log/slog"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/internal/testkit/pgtest"
)

// postgresSecret is the password in the URLs of the tests that check that
// it is never shown. The test server trusts local connections, so it
// ignores the password.
const postgresSecret = "pw-cmd-s3cret"

// uniqueName returns prefix followed by random lower-case letters and
// digits, a name that no other test uses.
func uniqueName(prefix string) string { return prefix + strings.ToLower(rand.Text()) }

// postgresConn returns a connection to the test server, closed when the
// test ends.
func postgresConn(t *testing.T) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// postgresSchema creates a schema of the test's own, dropped when it ends,
// and returns the URL with it as search_path and postgresSecret as password.
func postgresSchema(t *testing.T) (schema, serverURL string) {
	t.Helper()
	base := pgtest.URL(t)
	admin := postgresConn(t)
	schema = uniqueName("petstore_cmd_test_")
	if _, err := admin.Exec(t.Context(), "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize()); err != nil {
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
	var n int
	if err := postgresConn(t).QueryRow(t.Context(), "SELECT count(*) FROM "+pgx.Identifier{schema, "pets"}.Sanitize()).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
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
	getenv := func(k string) string { return map[string]string{"PETSTORE_API_KEYS": "key"}[k] }
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
// are, with the schema in effect, without the password.
func TestPostgresOpenLogsStore(t *testing.T) {
	schema, serverURL := postgresSchema(t)
	var log bytes.Buffer
	store, closeStore, err := openPostgresStore(context.Background(), serverURL, "", "", true, slog.New(slog.NewTextHandler(&log, nil)))
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
	for _, want := range []string{"storing pets in PostgreSQL", "host=127.0.0.1", "table=pets ", "schema=" + schema} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("the log does not say %s:\n%s", want, log.String())
		}
	}
	if strings.Contains(log.String(), postgresSecret) {
		t.Errorf("the log shows the password:\n%s", log.String())
	}
}

// TestPostgresListenURL: behind PgBouncer in transaction mode, which does
// not carry LISTEN, two servers given -postgres-listen wake each other's
// watch streams at once, not at the 10 s poll.
func TestPostgresListenURL(t *testing.T) {
	const key = "listen-key"
	base, err := url.Parse(pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	// A database of its own: PgBouncer refuses search_path, so the servers
	// keep their pets in the default schema.
	admin := postgresConn(t)
	db := uniqueName("petstore_listen_")
	if _, err := admin.Exec(t.Context(), "CREATE DATABASE "+db); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = admin.Exec(context.Background(), "DROP DATABASE "+db+" WITH (FORCE)") })
	base.Path = "/" + db
	t.Setenv(pgtest.URLVar, base.String())
	pooled := pgtest.PgBouncer(t) + "&default_query_exec_mode=cache_describe"

	bin := buildServer(t)
	env := []string{postgresURLVar + "=" + pooled}
	a := startServer(t, bin, key, env, "-postgres-listen", base.String())
	p := startServer(t, bin, key, env, "-postgres-listen", base.String())
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	w := startWatcher(ctx, t, p.baseURL, key, "")
	time.Sleep(500 * time.Millisecond) // for the stream to open and read the empty table
	pet, _, err := newClient(t, a, key).Add(ctx, petstore.NewPet{Name: "Rex", CategoryID: 1}, petstore.AddOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w.waitFor(t, []petstore.Pet{pet}, 5*time.Second) // well before the poll
}
