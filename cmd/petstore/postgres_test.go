package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"net"
	"net/http"
	"net/url"
	"regexp"
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

// parseURL parses rawURL, failing the test if it cannot.
func parseURL(t *testing.T, rawURL string) *url.URL {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

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
	query := "SELECT count(*) FROM " + pgx.Identifier{schema, "pets"}.Sanitize()
	if err := postgresConn(t).QueryRow(t.Context(), query).Scan(&n); err != nil {
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
		listen          string // -postgres-listen, when set
	}{
		{"refused", "postgres://app:" + s + "@" + refused + "/shop?sslmode=disable", "connection refused", ""},
		{"refused, password in query", "postgres://app@" + refused + "/shop?sslmode=disable&password=" + s, "connection refused", ""},
		{"refused, key-value", "host=127.0.0.1 port=" + strings.Split(refused, ":")[1] + " user=app password=" + s + " sslmode=disable", "connection refused", ""},
		{"bad port", "postgres://app:" + s + "@127.0.0.1:notaport/shop", "not valid", ""},
		{"bad sslmode", "postgres://app:" + s + "@127.0.0.1/shop?sslmode=sometimes", "not valid", ""},
		{"slash in password", "postgres://app:" + s + "/" + s + "@127.0.0.1:notaport/shop", "not valid", ""},
		{"at sign in password", "postgres://app:" + s + "@" + s + "@127.0.0.1:notaport/shop", "not valid", ""},
		{"colon in password", "postgres://app:" + s + ":" + s + "@127.0.0.1:5432:5433/shop", "not valid", ""},
		{"at sign in password, refused", "postgres://app:" + s + "@" + s + "@" + refused + "/shop?sslmode=disable", "failed to connect", ""},
		{"key-value, bad port", "host=127.0.0.1 port=nope user=app password='" + s + " x' sslmode=disable", "not valid", ""},
		{"unknown scheme", "mysql://app:" + s + "@127.0.0.1/shop", "not valid", ""},
		{"listen URL, colon in password", "postgres://app@" + refused + "/shop", "not valid",
			"postgres://app:" + s + ":" + s + "@127.0.0.1:5432:5433/shop"},
		{"listen URL, at sign in password", "postgres://app@" + refused + "/shop", "not valid",
			"postgres://app:" + s + "@" + s + "@127.0.0.1:notaport/shop"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			args := []string{"-addr", "127.0.0.1:0", "-postgres", tt.url}
			if tt.listen != "" {
				args = append(args, "-postgres-listen", tt.listen)
			}
			err := run(context.Background(), args, getenv, &stdout, &stderr)
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

// TestPostgresListenURL: behind PgBouncer in transaction mode, which does
// not carry LISTEN, two servers given -postgres-listen wake each other's
// watch streams at once, not at the 10 s poll.
func TestPostgresListenURL(t *testing.T) {
	const key = "listen-key"
	base := parseURL(t, pgtest.URL(t))
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

// docsRole returns what docs/postgres.md's section on a role that only
// serves says to run: the SQL that creates the role and grants it its privileges,
// one statement a line, and the arguments it gives the server.
func docsRole(t *testing.T) (statements []string, serveArgs []string) {
	t.Helper()
	_, section, ok := strings.Cut(readFile(t, "../../docs/postgres.md"), "\n## Migrating apart, and serving as a role that may not change the schema\n")
	if !ok {
		t.Fatal("docs/postgres.md has no section \"Migrating apart, and serving as a role that may not change the schema\"")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	_, block, ok := strings.Cut(section, "```sql\n")
	if !ok {
		t.Fatal("docs/postgres.md's section on the serving role has no ```sql block")
	}
	block, _, _ = strings.Cut(block, "```\n")
	for line := range strings.Lines(block) {
		if line = strings.TrimSpace(line); line != "" {
			statements = append(statements, line)
		}
	}
	m := regexp.MustCompile(`(?m)^    PETSTORE_POSTGRES_URL='postgres://petstore_app:[^']*' go run \./cmd/petstore(.*)$`).FindStringSubmatch(section)
	if m == nil {
		t.Fatal("docs/postgres.md's section on the serving role does not say how to start the server as petstore_app")
	}
	return statements, strings.Fields(m[1])
}

// TestDocsServingRole creates the serving role as docs/postgres.md says,
// starts the server as it, and creates pets with and without idempotency
// keys, through HTTP and the Go client.
func TestDocsServingRole(t *testing.T) {
	pgtest.URL(t)
	statements, args := docsRole(t)
	if len(statements) < 2 || !strings.HasPrefix(statements[0], "CREATE ROLE petstore_app LOGIN") {
		t.Fatalf("docs/postgres.md's SQL does not start with CREATE ROLE petstore_app LOGIN:\n%s", strings.Join(statements, "\n"))
	}
	bin := buildServer(t)
	// The owner migrates a new schema; a new role, dropped when the test
	// ends, is given the privileges that the SQL grants.
	schema, ownerURL := postgresSchema(t)
	mustRun(t, t.TempDir(), bin, []string{postgresURLVar + "=" + ownerURL}, "migrate")
	role, conn := uniqueName("petstore_test_app_"), postgresConn(t)
	t.Cleanup(func() {
		for _, stmt := range []string{"DROP OWNED BY " + role, "DROP ROLE IF EXISTS " + role} {
			if _, err := conn.Exec(context.Background(), stmt); err != nil {
				t.Errorf("%s: %v", stmt, err)
			}
		}
	})
	for _, stmt := range statements {
		stmt = strings.ReplaceAll(strings.ReplaceAll(stmt, "petstore_app", role), "public", schema) // a name that needs no quotes
		if _, err := conn.Exec(t.Context(), stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	roleURL := parseURL(t, ownerURL)
	roleURL.User = url.UserPassword(role, "change-me")

	const key = "role-key"
	p := startServer(t, bin, key, []string{postgresURLVar + "=" + roleURL.String()}, append(args, "-admin-addr", "127.0.0.1:0")...)
	for _, idemKey := range []string{"", "readme-role-1", "readme-role-1"} {
		if a := createPet(t, p.baseURL, key, idemKey, petstore.NewPet{Name: "Rex", CategoryID: 1}); a.status != http.StatusCreated {
			t.Errorf("create with the idempotency key %q: %v; want 201; the server's log:\n%s", idemKey, a, p.stderr)
		}
	}
	if _, _, err := newClient(t, p, key).Add(t.Context(), petstore.NewPet{Name: "Tom", CategoryID: 2}, petstore.AddOptions{}); err != nil {
		t.Errorf("a create through the Go client, which sends a key: %v", err)
	}
	if n := postgresCount(t, schema); n != 3 {
		t.Errorf("%s.pets holds %d pets; want 3 (the keyed create again is a replay)", schema, n)
	}

	// A privilege revoked while the server runs shows on /readyz, with the
	// GRANT that gives it back.
	if _, err := conn.Exec(t.Context(), "REVOKE DELETE ON "+schema+".pets_keys FROM "+role); err != nil {
		t.Fatal(err)
	}
	status, probe := readyz(t, adminURL(t, p))
	grant := "GRANT DELETE ON " + schema + ".pets_keys TO " + role + ";"
	if status != http.StatusServiceUnavailable || !strings.HasSuffix(probe.Reason, grant) {
		t.Errorf("/readyz with DELETE revoked: %d %+v; want 503 with a reason ending %q", status, probe, grant)
	}
}

// TestMigrateCommand: "petstore migrate" migrates, then has nothing to do;
// before it, a server with -migrate=false refuses to start, naming it.
func TestMigrateCommand(t *testing.T) {
	bin := buildServer(t)
	schema, serverURL := postgresSchema(t)
	code, _, stderr := runToExit(t, bin, []string{"PETSTORE_API_KEYS=k", postgresURLVar + "=" + serverURL}, "-migrate=false")
	if code != 2 || !strings.Contains(stderr, "the table "+schema+".pets") || !strings.Contains(stderr, "run petstore migrate as a role that may create tables") {
		t.Errorf("-migrate=false before migrating: exit status %d (want 2); stderr:\n%s", code, stderr)
	}
	for i, want := range []string{
		`"pets" in the database test on 127.0.0.1: migrated from schema version 0 to 3` + "\n",
		`"pets" in the database test on 127.0.0.1: at schema version 3, the version this release needs: nothing to do` + "\n",
	} {
		if out := mustRun(t, t.TempDir(), bin, []string{postgresURLVar + "=" + serverURL}, "migrate"); out != want {
			t.Errorf("petstore migrate, run %d: %q; want %q", i+1, out, want)
		}
	}
	p := startServer(t, bin, "k", []string{postgresURLVar + "=" + serverURL}, "-migrate=false")
	if a := createPet(t, p.baseURL, "k", "", petstore.NewPet{Name: "Rex", CategoryID: 1}); a.status != http.StatusCreated {
		t.Errorf("create after petstore migrate: %v", a)
	}
}

// TestMigrateCommandNeedsURL checks that "petstore migrate" without a
// database says what it needs.
func TestMigrateCommandNeedsURL(t *testing.T) {
	err := run(context.Background(), []string{"migrate"}, func(string) string { return "" }, &strings.Builder{}, &strings.Builder{})
	if err == nil || !strings.Contains(err.Error(), "petstore migrate needs the database's URL in PETSTORE_POSTGRES_URL or -postgres") {
		t.Errorf("petstore migrate without a URL: %v", err)
	}
}
