package contracttest_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/internal/wire"
	"github.com/petstore-go/petstore/memstore"
)

// lintDir holds the package.json and package-lock.json of the linters, and
// once `npm ci --prefix testdata/lint` has run, their node_modules.
const lintDir = "testdata/lint"

// unavailable skips t with msg, or fails it under CI=true, where .ci/run
// installs what the test needs.
func unavailable(t *testing.T, msg string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// servedDocument returns the document that a default handler serves.
func servedDocument(t *testing.T) []byte {
	t.Helper()
	return contractDocument(t, contractHandler(t, memstore.New()), petstore.DefaultBasePath+wire.OpenAPIPath)
}

// TestLinters runs Redocly CLI (rule set recommended-strict) and Spectral
// (spectral:oas, every severity) on the served document, which they must
// find nothing in, and on the document with an unused component added,
// which both must reject.
func TestLinters(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		unavailable(t, "node is not installed (apt-get install -y nodejs npm): "+err.Error())
	}
	lint, err := filepath.Abs(lintDir)
	if err != nil {
		t.Fatal(err)
	}
	bin, ruleset := filepath.Join(lint, "node_modules", ".bin"), filepath.Join(lint, ".spectral.yaml")
	linters := []struct {
		name string
		args []string
	}{
		{"redocly", []string{"lint", "--extends", "recommended-strict", "openapi.json"}},
		{"spectral", []string{"lint", "--ruleset", ruleset, "--fail-severity", "hint", "openapi.json"}},
	}
	for _, l := range linters {
		if _, err := os.Stat(filepath.Join(bin, l.name)); err != nil {
			unavailable(t, "the linters are not installed (npm ci --prefix contracttest/"+lintDir+"): "+err.Error())
		}
	}

	served := servedDocument(t)
	var doc map[string]any
	if err := json.Unmarshal(served, &doc); err != nil {
		t.Fatal(err)
	}
	doc["components"].(map[string]any)["responses"].(map[string]any)["Unused"] = map[string]any{"description": "Nothing refers to it."}
	unused, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	documents := []struct {
		name      string
		doc       []byte
		wantClean bool
	}{
		{"served", served, true},
		{"with an unused component", unused, false},
	}
	for _, d := range documents {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "openapi.json"), d.doc, 0o600); err != nil {
			t.Fatal(err)
		}
		for _, l := range linters {
			t.Run(l.name+" on the "+d.name+" document", func(t *testing.T) {
				t.Parallel()
				cmd := exec.Command(filepath.Join(bin, l.name), l.args...)
				cmd.Dir = dir // no configuration file of the tree applies
				cmd.Env = append(os.Environ(), "REDOCLY_TELEMETRY=off", "REDOCLY_SUPPRESS_UPDATE_NOTICE=true", "NO_COLOR=1")
				out, err := cmd.CombinedOutput()
				if exit := (*exec.ExitError)(nil); err != nil && !errors.As(err, &exit) {
					t.Fatal(err)
				}
				if clean := err == nil; clean != d.wantClean {
					t.Errorf("exit %v, want a clean run %v; it printed:\n%s", err, d.wantClean, bytes.TrimSpace(out))
				}
			})
		}
	}
}
