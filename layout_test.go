package petstore_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// modulePath is the root module's import path.
const modulePath = "github.com/petstore-go/petstore"

// testkitPath is the import path of the test support: harnesses that may
// import the root package and that only tests may import.
const testkitPath = modulePath + "/internal/testkit"

// layoutViolations walks the repository at root (nested modules included,
// since their import paths extend the root's) and returns one line per import
// that breaks the layout of internal/:
//
//   - a package under internal/ but outside internal/testkit imports the
//     root package, from any of its files: the handler's helpers are leaves,
//     so no arrow points back up;
//   - a file that is not a test, outside internal/testkit, imports
//     internal/testkit: test support never reaches a build.
//
// Files are read with go/parser rather than go/build, so a file behind a
// build tag is checked too.
func layoutViolations(root string) ([]string, error) {
	var bad []string
	err := walkGoFiles(root, parser.ImportsOnly, func(rel string, f *ast.File) error {
		pkg := path.Join(modulePath, path.Dir(rel))
		inTestkit := pkg == testkitPath || strings.HasPrefix(pkg, testkitPath+"/")
		inInternal := strings.HasPrefix(pkg, modulePath+"/internal/")
		isTest := strings.HasSuffix(rel, "_test.go")
		for _, spec := range f.Imports {
			imp, err := strconv.Unquote(spec.Path.Value)
			if err != nil {
				return err
			}
			switch {
			case inInternal && !inTestkit && imp == modulePath:
				bad = append(bad, rel+" imports the root package: only internal/testkit may")
			case !isTest && !inTestkit && (imp == testkitPath || strings.HasPrefix(imp, testkitPath+"/")):
				bad = append(bad, rel+" imports "+imp+": only tests may")
			}
		}
		return nil
	})
	return bad, err
}

// walkGoFiles parses, with mode, every .go file under root, nested modules
// and files behind build tags included, and calls visit with its path
// relative to root (with forward slashes). It skips testdata and the
// directories whose names start with "." or "_", as the go command does.
func walkGoFiles(root string, mode parser.Mode, visit func(rel string, f *ast.File) error) error {
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, mode|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		return visit(filepath.ToSlash(rel), f)
	})
}

// TestLayout checks the repository itself: no package under internal/ points
// back up at the root unless it is test support under internal/testkit, and
// nothing but tests imports that support.
func TestLayout(t *testing.T) {
	bad, err := layoutViolations(".")
	if err != nil {
		t.Fatal(err)
	}
	if len(bad) > 0 {
		t.Errorf("the layout of internal/ is broken (see DESIGN's rooms):\n%s", strings.Join(bad, "\n"))
	}
}

// TestLayoutViolations shows on a made-up tree that layoutViolations catches
// each kind of wrong import and lets the allowed ones through, so TestLayout
// passing means something.
func TestLayoutViolations(t *testing.T) {
	const (
		root    = `import _ "github.com/petstore-go/petstore"` + "\n"
		testkit = `import _ "github.com/petstore-go/petstore/internal/testkit/wirecases"` + "\n"
	)
	tests := []struct {
		name  string
		files map[string]string // path: package clause and imports
		want  []string
	}{
		{
			name: "allowed",
			files: map[string]string{
				"go.mod": "module " + modulePath + "\n",
				"internal/testkit/wirecases/wirecases.go": "package wirecases\n" + root,
				"internal/testkit/loadtest/loadtest.go":   "package loadtest\n" + testkit,
				"handler_test.go":                         "package petstore_test\n" + testkit,
				"pgstore/load_test.go":                    "package pgstore_test\n" + testkit,
				"memstore/memstore.go":                    "package memstore\n" + root,
				"internal/respond/respond.go":             "package respond\nimport _ \"net/http\"\n",
				"testdata/fixture/fixture.go":             "package fixture\n" + testkit,
			},
		},
		{
			name: "helper imports root",
			files: map[string]string{
				"internal/respond/respond.go": "package respond\n" + root,
			},
			want: []string{"internal/respond/respond.go imports the root package: only internal/testkit may"},
		},
		{
			name: "helper test imports root",
			files: map[string]string{
				"internal/body/body_test.go": "package body_test\n" + root,
			},
			want: []string{"internal/body/body_test.go imports the root package: only internal/testkit may"},
		},
		{
			name: "library imports testkit",
			files: map[string]string{
				"handler.go": "package petstore\n" + testkit,
			},
			want: []string{"handler.go imports github.com/petstore-go/petstore/internal/testkit/wirecases: only tests may"},
		},
		{
			name: "nested module's command imports testkit",
			files: map[string]string{
				"cmd/petstore/main.go": "package main\n" + testkit,
			},
			want: []string{"cmd/petstore/main.go imports github.com/petstore-go/petstore/internal/testkit/wirecases: only tests may"},
		},
		{
			name: "helper imports testkit",
			files: map[string]string{
				"internal/clip/clip.go": "package clip\n" + testkit,
			},
			want: []string{"internal/clip/clip.go imports github.com/petstore-go/petstore/internal/testkit/wirecases: only tests may"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, tt.files)
			got, err := layoutViolations(dir)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("layoutViolations (-want +got):\n%s", diff)
			}
		})
	}
}

// writeFiles writes files, by slash-separated path under dir, with their
// text.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
