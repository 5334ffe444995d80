package contracttest_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/memstore"
)

// TestGeneratedClients generates a client with ogen and one with
// oapi-codegen from the served document, at the versions that the module
// testdata/generated pins with its tool directives, into a copy of that
// module, and runs each one's session test (a 401, creates, a filtered list
// page by page, a get, a 404, a 400 with its field errors) against a real
// handler of its own.
func TestGeneratedClients(t *testing.T) {
	if testing.Short() {
		t.Skip("generating and building two clients takes minutes the first time; run without -short")
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		unavailable(t, "the go command is not on the PATH: "+err.Error())
	}
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("testdata/generated")); err != nil {
		t.Fatal(err)
	}
	// Its go.mod is kept as go.mod.in, so that the repository's own module
	// commands, which walk every go.mod, leave the clients' module alone.
	if err := os.Rename(filepath.Join(dir, "go.mod.in"), filepath.Join(dir, "go.mod")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "openapi.json"), servedDocument(t), 0o600); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod", "PETSTORE_KEY="+contractKey)
	for _, pkg := range []string{"ogenclient", "oapiclient"} {
		env = append(env, "PETSTORE_"+strings.ToUpper(pkg)+"_URL="+contractServer(t, memstore.New())+petstore.DefaultBasePath)
	}
	run := func(args ...string) (string, error) {
		cmd := exec.Command(goCmd, args...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		return string(out), err
	}

	if out, err := run("mod", "download"); err != nil {
		unavailable(t, "the generators could not be fetched from the Go module proxy: "+err.Error()+"\n"+out)
	}
	for _, gen := range [][]string{
		{"tool", "ogen", "-package", "ogenclient", "-target", "ogenclient", "-config", "ogen.yml", "openapi.json"},
		{"tool", "oapi-codegen", "-generate", "types,client", "-package", "oapiclient", "-o", "oapiclient/client.gen.go", "openapi.json"},
	} {
		if out, err := run(gen...); err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(gen, " "), err, out)
		}
	}
	out, err := run("test", "-count=1", "-v", "./ogenclient", "./oapiclient")
	if err != nil {
		t.Fatalf("the generated clients do not build or fail their session: %v\n%s", err, out)
	}
	if n := strings.Count(out, "--- PASS: TestSession"); n != 2 {
		t.Errorf("%d sessions passed, want 2:\n%s", n, out)
	}
}
