package petstore_test

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/petstore-go/petstore/httpapi"
)

// TestREADMEWireTable compares the README's table of answers ("On the
// wire") with the OpenAPI document and with httpapi: every status an
// operation can answer is in the table, every error code is there with the
// status httpapi gives it, and the table lists nothing else.
func TestREADMEWireTable(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "\n## On the wire\n")
	if !ok {
		t.Fatal("README.md has no section \"On the wire\"")
	}
	_, table, ok := strings.Cut(section, "\n| status | code | when |\n|---|---|---|\n")
	if !ok {
		t.Fatal("the README's section \"On the wire\" has no table | status | code | when |")
	}
	row := regexp.MustCompile("^\\| (\\d{3}) \\| (?:`([a-z_]+)`)? *\\|")
	var got []string // "status code", or "status" alone for a success
	for line := range strings.Lines(table) {
		if !strings.HasPrefix(line, "|") {
			break
		}
		m := row.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("a row of the README's table is not | status | `code` | when |: %s", line)
		}
		got = append(got, strings.TrimSpace(m[1]+" "+m[2]))
	}

	// From the OpenAPI document: every status of every operation, and
	// the error codes of the Error schema.
	var doc struct {
		Paths      map[string]map[string]json.RawMessage
		Components struct {
			Responses map[string]json.RawMessage
			Schemas   struct {
				Error struct {
					Properties struct {
						Code struct {
							Enum []string
						}
					}
				}
			}
		}
	}
	if err := json.Unmarshal(openapiFile(t), &doc); err != nil {
		t.Fatal(err)
	}
	statuses := map[int]bool{405: true} // 405 is an answer of a path, not of an operation
	for _, ops := range doc.Paths {
		for _, raw := range ops {
			var op struct{ Responses map[string]json.RawMessage }
			if json.Unmarshal(raw, &op) != nil {
				continue // not an operation
			}
			for status := range op.Responses {
				n, err := strconv.Atoi(status)
				if err != nil {
					t.Fatalf("the OpenAPI document has a response %q that is not a status", status)
				}
				statuses[n] = true
			}
		}
	}
	codes := doc.Components.Schemas.Error.Properties.Code.Enum
	if diff := cmp.Diff(sorted(httpapiCodes(t)), sorted(codes)); diff != "" {
		t.Errorf("the codes of httpapi (-) and of the OpenAPI document's Error (+) differ:\n%s", diff)
	}
	var want []string
	errorStatuses := map[int]bool{}
	for _, c := range codes {
		status := httpapi.Code(c).Status()
		errorStatuses[status] = true
		want = append(want, fmt.Sprint(status, " ", c))
	}
	for status := range statuses {
		if !errorStatuses[status] {
			want = append(want, strconv.Itoa(status))
		}
	}
	for status := range errorStatuses {
		if !statuses[status] {
			t.Errorf("no operation of the OpenAPI document answers %d, which httpapi gives a code", status)
		}
	}
	if diff := cmp.Diff(sorted(want), sorted(got)); diff != "" {
		t.Errorf("the README's table (+) and the answers of the OpenAPI document and httpapi (-) differ:\n%s", diff)
	}
}

// httpapiCodes returns the values of the Code constants declared in
// httpapi/error.go: the codes that reach a client.
func httpapiCodes(t *testing.T) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "httpapi/error.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var codes []string
	ast.Inspect(f, func(n ast.Node) bool {
		spec, ok := n.(*ast.ValueSpec)
		if !ok || spec.Type == nil {
			return true
		}
		if id, ok := spec.Type.(*ast.Ident); !ok || id.Name != "Code" {
			return true
		}
		for _, v := range spec.Values {
			if lit, ok := v.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				s, err := strconv.Unquote(lit.Value)
				if err != nil {
					t.Fatal(err)
				}
				codes = append(codes, s)
			}
		}
		return true
	})
	if len(codes) == 0 {
		t.Fatal("found no Code constants in httpapi/error.go")
	}
	return codes
}

// sorted returns s sorted, for comparing sets.
func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}
