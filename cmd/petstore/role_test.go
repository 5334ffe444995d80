package main

import (
	"context"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/internal/testkit/pgtest"
)

// docsRole returns what docs/postgres.md's section on a role that only
// serves says to run: the SQL that creates the role and grants it its privileges,
// one statement a line, and the arguments it gives the server.
func docsRole(t *testing.T) (statements []string, serveArgs []string) {
	t.Helper()
	page, err := os.ReadFile("../../docs/postgres.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(page), "\n## Migrating apart, and serving as a role that may not change the schema\n")
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

// roleSetup migrates the tables of a new schema as the owner, and returns
// the schema, a new role's name (dropped when the test ends) and the URL of
// that role with the schema as search_path.
func roleSetup(t *testing.T, bin string) (schema, role, roleURL string) {
	t.Helper()
	schema, ownerURL := postgresSchema(t)
	mustRun(t, t.TempDir(), bin, []string{postgresURLVar + "=" + ownerURL}, "migrate")
	role = uniqueName("petstore_test_app_")
	conn := postgresConn(t)
	t.Cleanup(func() {
		ctx := context.Background()
		for _, stmt := range []string{"DROP OWNED BY " + role, "DROP ROLE IF EXISTS " + role} {
			if _, err := conn.Exec(ctx, stmt); err != nil {
				t.Errorf("%s: %v", stmt, err)
			}
		}
	})
	u, err := url.Parse(ownerURL)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(role, "change-me")
	return schema, role, u.String()
}

// roleGrant runs the statements of docs/postgres.md for role in schema.
func roleGrant(t *testing.T, statements []string, schema, role string) {
	t.Helper()
	conn := postgresConn(t)
	for _, stmt := range statements {
		stmt = strings.ReplaceAll(stmt, "petstore_app", role)
		stmt = strings.ReplaceAll(stmt, "public", schema) // a name that needs no quotes
		if _, err := conn.Exec(context.Background(), stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
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
	schema, role, roleURL := roleSetup(t, bin)
	roleGrant(t, statements, schema, role)

	const key = "role-key"
	p := startServer(t, bin, key, []string{postgresURLVar + "=" + roleURL}, append(args, "-admin-addr", "127.0.0.1:0")...)
	for _, idemKey := range []string{"", "readme-role-1", "readme-role-1"} {
		if a := createPet(t, p.baseURL, key, idemKey, petstore.NewPet{Name: "Rex", CategoryID: 1}); a.status != http.StatusCreated {
			t.Errorf("create with the idempotency key %q: %v; want 201; the server's log:\n%s", idemKey, a, p.stderr)
		}
	}
	if _, _, err := newClient(t, p, key).Add(context.Background(), petstore.NewPet{Name: "Tom", CategoryID: 2}, petstore.AddOptions{}); err != nil {
		t.Errorf("a create through the Go client, which sends a key: %v", err)
	}
	if n := postgresCount(t, schema); n != 3 {
		t.Errorf("%s.pets holds %d pets; want 3 (the keyed create again is a replay)", schema, n)
	}

	// A privilege revoked while the server runs shows on /readyz, with the
	// GRANT that gives it back.
	conn := postgresConn(t)
	if _, err := conn.Exec(context.Background(), "REVOKE DELETE ON "+schema+".pets_keys FROM "+role); err != nil {
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
	if status, body := adminDo(t, apiRequest{method: http.MethodPost, url: p.baseURL + "/pets", key: "k", body: `{"name":"Rex","categoryId":1}`}); status != http.StatusCreated {
		t.Errorf("create after petstore migrate: %d %s", status, body)
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
