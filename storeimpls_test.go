package petstore_test

import (
	"go/ast"
	"go/token"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// unassertedStores walks the repository at root, nested modules included,
// and returns "dir: Type" for every type that looks like a Store but has no
// `var _ petstore.Store = ...` line (`var _ Store = ...` in the root
// package) in its directory. A type looks like a Store when it embeds
// petstore.Store or *memstore.Store, or has a List method taking
// ListOptions or an Add method taking AddOptions. The line makes the
// compiler say which types a change to Store breaks, fakes included.
func unassertedStores(root string) ([]string, error) {
	type key struct{ dir, typ string }
	looks := map[key]bool{}
	asserted := map[key]bool{}
	err := walkGoFiles(root, 0, func(rel string, f *ast.File) error {
		dir := path.Dir(rel)
		for _, decl := range f.Decls {
			switch decl := decl.(type) {
			case *ast.FuncDecl:
				if t := receiverType(decl); t != "" && isStoreMethod(decl) {
					looks[key{dir, t}] = true
				}
			case *ast.GenDecl:
				for _, spec := range decl.Specs {
					switch spec := spec.(type) {
					case *ast.TypeSpec:
						if st, ok := spec.Type.(*ast.StructType); ok && embedsStore(st) {
							looks[key{dir, spec.Name.Name}] = true
						}
					case *ast.ValueSpec:
						if t := assertedStore(spec); t != "" {
							asserted[key{dir, t}] = true
						}
					}
				}
			}
		}
		return nil
	})
	var bad []string
	for k := range looks {
		if !asserted[k] {
			bad = append(bad, k.dir+": "+k.typ)
		}
	}
	slices.Sort(bad)
	return bad, err
}

// typeName returns the name of a type expression T, *T, pkg.T or *pkg.T
// with the package, and "" for anything else.
func typeName(e ast.Expr) string {
	if s, ok := e.(*ast.StarExpr); ok {
		e = s.X
	}
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		if pkg, ok := e.X.(*ast.Ident); ok {
			return pkg.Name + "." + e.Sel.Name
		}
	}
	return ""
}

// receiverType returns the name of the type of fn's receiver, "" for a
// function.
func receiverType(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) != 1 {
		return ""
	}
	return typeName(fn.Recv.List[0].Type)
}

// isStoreMethod reports whether fn is a List taking ListOptions or an Add
// taking AddOptions.
func isStoreMethod(fn *ast.FuncDecl) bool {
	want := map[string]string{"List": "ListOptions", "Add": "AddOptions"}[fn.Name.Name]
	if want == "" {
		return false
	}
	for _, p := range fn.Type.Params.List {
		if t := typeName(p.Type); t == want || t == "petstore."+want {
			return true
		}
	}
	return false
}

// embedsStore reports whether st embeds petstore.Store or *memstore.Store.
func embedsStore(st *ast.StructType) bool {
	for _, f := range st.Fields.List {
		if len(f.Names) == 0 {
			if t := typeName(f.Type); t == "petstore.Store" || t == "memstore.Store" {
				return true
			}
		}
	}
	return false
}

// assertedStore returns T for `var _ petstore.Store = T{}`, `(*T)(nil)` or
// `&T{}` (or `var _ Store = ...`), and "" for any other declaration.
func assertedStore(v *ast.ValueSpec) string {
	if len(v.Names) != 1 || v.Names[0].Name != "_" || len(v.Values) != 1 {
		return ""
	}
	if t := typeName(v.Type); t != "petstore.Store" && t != "Store" {
		return ""
	}
	switch e := v.Values[0].(type) {
	case *ast.CompositeLit:
		return typeName(e.Type)
	case *ast.UnaryExpr:
		if c, ok := e.X.(*ast.CompositeLit); ok && e.Op == token.AND {
			return typeName(c.Type)
		}
	case *ast.CallExpr: // (*T)(nil)
		if p, ok := e.Fun.(*ast.ParenExpr); ok {
			if s, ok := p.X.(*ast.StarExpr); ok {
				return typeName(s.X)
			}
		}
	}
	return ""
}

// TestStoreImplsAsserted checks the repository itself: every type that
// looks like a Store, test fakes included, says so with a var _ line, so
// that growing Store names every type it breaks.
func TestStoreImplsAsserted(t *testing.T) {
	bad, err := unassertedStores(".")
	if err != nil {
		t.Fatal(err)
	}
	if len(bad) > 0 {
		t.Errorf("these types look like a Store but have no `var _ petstore.Store = ...` line:\n%s", strings.Join(bad, "\n"))
	}
}

// TestUnassertedStores shows on made-up files that unassertedStores finds
// each kind of Store without its line and accepts each form of the line,
// so TestStoreImplsAsserted passing means something.
func TestUnassertedStores(t *testing.T) {
	const list = "(ctx context.Context, opts petstore.ListOptions) ([]petstore.Pet, error) { return nil, nil }\n"
	tests := []struct {
		name  string
		files map[string]string
		want  []string
	}{
		{
			name: "asserted, each form",
			files: map[string]string{
				"a/a.go": "package a\n" +
					"type S struct{}\nvar _ petstore.Store = (*S)(nil)\nfunc (s *S) List" + list +
					"type V struct{ petstore.Store }\nvar _ petstore.Store = V{}\n" +
					"type P struct{ *memstore.Store }\nvar _ petstore.Store = &P{}\n",
				"b/b_test.go":      "package b_test\ntype fake struct{ petstore.Store }\nfunc (fake) List" + list,
				"b/assert_test.go": "package b_test\nvar _ petstore.Store = fake{}\n",
				"root.go":          "package petstore\ntype guarded struct{}\nvar _ Store = (*guarded)(nil)\nfunc (g *guarded) Add(ctx context.Context, p NewPet, o AddOptions) (Pet, bool, error) { return Pet{}, false, nil }\n",
				"c/other.go":       "package c\ntype notAStore struct{}\nfunc (notAStore) List() []int { return nil }\n",
			},
		},
		{
			name: "a method, no line",
			files: map[string]string{
				"a/a.go": "package a\ntype S struct{}\nfunc (s *S) List" + list,
			},
			want: []string{"a: S"},
		},
		{
			name: "an embedded Store, no line",
			files: map[string]string{
				"a/a_test.go": "package a_test\ntype fake struct{ petstore.Store }\ntype mem struct{ *memstore.Store; n int }\n",
			},
			want: []string{"a: fake", "a: mem"},
		},
		{
			name: "the line in another directory",
			files: map[string]string{
				"a/a.go": "package a\ntype S struct{ petstore.Store }\n",
				"b/b.go": "package b\nvar _ petstore.Store = a.S{}\n",
			},
			want: []string{"a: S"},
		},
		{
			name: "the line of another interface",
			files: map[string]string{
				"a/a.go": "package a\ntype S struct{ petstore.Store }\nvar _ petstore.Authenticator = S{}\n",
			},
			want: []string{"a: S"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, tt.files)
			got, err := unassertedStores(dir)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("unassertedStores (-want +got):\n%s", diff)
			}
		})
	}
}
