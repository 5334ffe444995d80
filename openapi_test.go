package petstore_test

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/httpapi"
	"github.com/petstore-go/petstore/internal/wire"
	"github.com/petstore-go/petstore/memstore"
)

// openapiFile is the document as it is embedded, read from the source tree.
func openapiFile(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile("openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestOpenAPIServed checks that the document is served at {base}/openapi.json
// without authentication, with the JSON headers of every response, and with
// its server URL set to the base path; that a default handler serves
// openapi.json of the source tree byte for byte; and that HEAD answers as
// GET without a body.
func TestOpenAPIServed(t *testing.T) {
	tests := []struct {
		name       string
		opts       []petstore.Option
		target     string
		wantServer string
	}{
		{"default", nil, "/v1/openapi.json", "/v1"},
		{"other base path", []petstore.Option{petstore.WithBasePath("/api/animals")}, "/api/animals/openapi.json", "/api/animals"},
		{"empty base path", []petstore.Option{petstore.WithBasePath("")}, "/openapi.json", "/"},
		{"explicitly on", []petstore.Option{petstore.WithOpenAPI(true)}, "/v1/openapi.json", "/v1"},
		{"last option wins", []petstore.Option{petstore.WithOpenAPI(false), petstore.WithOpenAPI(true)}, "/v1/openapi.json", "/v1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHandler(t, memstore.New(), tt.opts...)
			var want map[string]any
			if err := json.Unmarshal(openapiFile(t), &want); err != nil {
				t.Fatal(err)
			}
			want["servers"] = []any{map[string]any{"url": tt.wantServer}} // the only part that depends on the options
			for _, header := range []http.Header{{"Authorization": nil}, nil, {"Authorization": {"Bearer wrong"}}} {
				w := serve(h, newRequest(t, http.MethodGet, tt.target, "", header))
				if w.Code != http.StatusOK {
					t.Fatalf("GET %s with %v: status %d, want 200; body %s", tt.target, header, w.Code, w.Body)
				}
				wantHeader := http.Header{
					"Content-Type":           {"application/json"},
					"Cache-Control":          {"no-store"},
					"X-Content-Type-Options": {"nosniff"},
					"Content-Length":         {strconv.Itoa(w.Body.Len())},
				}
				if diff := cmp.Diff(wantHeader, w.Header()); diff != "" {
					t.Errorf("GET %s: headers (-want +got):\n%s", tt.target, diff)
				}
				if diff := cmp.Diff(want, decode[map[string]any](t, w)); diff != "" {
					t.Errorf("GET %s: the document differs from openapi.json with servers %q (-want +got):\n%s", tt.target, tt.wantServer, diff)
				}
				if got, file := w.Body.String(), string(openapiFile(t)); tt.opts == nil && got != file {
					t.Errorf("the served document is not openapi.json byte for byte:\n%s", cmp.Diff(file, got))
				}
				head := serve(h, newRequest(t, http.MethodHead, tt.target, "", header))
				if diff := cmp.Diff(w.Header(), head.Header()); head.Code != http.StatusOK || head.Body.Len() != 0 || diff != "" {
					t.Errorf("HEAD %s: status %d with %d body bytes, headers (-get +head):\n%s", tt.target, head.Code, head.Body.Len(), diff)
				}
			}
		})
	}
}

// TestOpenAPIMatchesGo checks the numbers and names that the document shares
// with the Go API, so that changing one without the other fails. Its
// operations are checked against the route table by
// TestOpenAPIMatchesRoutes, its error codes against httpapi's by
// TestREADMEWireTable.
func TestOpenAPIMatchesGo(t *testing.T) {
	doc := readOpenAPIDoc(t)
	limit := doc.Components.Parameters["limit"].Schema
	if diff := cmp.Diff([]int{1, petstore.MaxPageSize, petstore.DefaultPageSize}, []int{limit.Minimum, limit.Maximum, limit.Default}); diff != "" {
		t.Errorf("limit minimum, maximum, default (-want +got):\n%s", diff)
	}
	schemas := doc.Components.Schemas
	for _, s := range []string{"NewPet", "Pet"} {
		if got := schemas[s].Properties["name"].MaxLength; got != petstore.MaxNameLength {
			t.Errorf("%s.name maxLength = %d, want %d", s, got, petstore.MaxNameLength)
		}
	}
	var wantStatus []string
	for _, st := range petstore.Statuses() {
		wantStatus = append(wantStatus, string(st))
	}
	if diff := cmp.Diff(wantStatus, schemas["PetStatus"].Enum); diff != "" {
		t.Errorf("PetStatus enum (-want +got):\n%s", diff)
	}
	if alt := "(&status=(" + strings.Join(wantStatus, "|") + "))"; !strings.Contains(string(openapiFile(t)), alt) {
		t.Errorf("the pattern of the next Link does not list the statuses as %s", alt)
	}
}

// The handler serves its OpenAPI document without authentication, with the
// base path as its server URL.
func ExampleWithOpenAPI() {
	h, err := petstore.New(
		petstore.WithStore(memstore.New()),
		petstore.WithAuthenticator(petstore.APIKeys("secret")),
		petstore.WithBasePath("/api/v1"),
	)
	if err != nil {
		panic(err)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/api/v1/openapi.json", nil))
	var doc struct {
		Servers []struct{ URL string }
	}
	if err := json.Unmarshal(w.Body.Bytes(), &doc); err != nil {
		panic(err)
	}
	fmt.Println(w.Code, doc.Servers[0].URL)

	// With WithOpenAPI(false), the path is unknown and behind authentication.
	h, _ = petstore.New(
		petstore.WithStore(memstore.New()),
		petstore.WithAuthenticator(petstore.APIKeys("secret")),
		petstore.WithOpenAPI(false),
	)
	w = httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/v1/openapi.json", nil))
	fmt.Println(w.Code)
	// Output:
	// 200 /api/v1
	// 401
}

// openapiResponse is a response of the document, or a reference to one.
type openapiResponse struct {
	Ref         string `json:"$ref"`
	Description string `json:"description"`
	Headers     map[string]struct {
		Ref string `json:"$ref"`
	} `json:"headers"`
}

// openapiDoc is what the tests read of the document.
type openapiDoc struct {
	Paths map[string]map[string]struct {
		OperationID string                     `json:"operationId"`
		Deprecated  bool                       `json:"deprecated"`
		Responses   map[string]openapiResponse `json:"responses"`
	} `json:"paths"`
	Components struct {
		Responses  map[string]openapiResponse `json:"responses"`
		Parameters map[string]struct {
			Schema struct{ Minimum, Maximum, Default int } `json:"schema"`
		} `json:"parameters"`
		Schemas map[string]struct {
			Enum       []string `json:"enum"`
			Properties map[string]struct {
				MaxLength int      `json:"maxLength"`
				Enum      []string `json:"enum"`
			} `json:"properties"`
		} `json:"schemas"`
	} `json:"components"`
}

// readOpenAPIDoc returns openapi.json of the source tree.
func readOpenAPIDoc(t *testing.T) openapiDoc {
	t.Helper()
	var doc openapiDoc
	if err := json.Unmarshal(openapiFile(t), &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// resolve returns r, or the response it refers to.
func (d *openapiDoc) resolve(t *testing.T, r openapiResponse) openapiResponse {
	t.Helper()
	if r.Ref == "" {
		return r
	}
	name, ok := strings.CutPrefix(r.Ref, "#/components/responses/")
	ref, found := d.Components.Responses[name]
	if !ok || !found {
		t.Fatalf("response reference %q is not to a response of the components", r.Ref)
	}
	return ref
}

// documentedCode is how a response's description names its error code.
var documentedCode = regexp.MustCompile("The code is `([a-z_]+)`")

// TestOpenAPIMatchesRoutes checks the document against the route table
// (wire.Routes), so that neither can change without the other: the same
// paths, methods, operationIds and deprecated flags; on every operation, the answers of authentication (each one authenticates),
// each error response naming a code of its status, and the rate limit
// headers on every answer (each one is governed by a budget); on a
// deprecated operation, the deprecation headers on every answer but those
// of authentication; and each header of an answer a reference to the one
// definition of the components.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	doc := readOpenAPIDoc(t)
	type op struct {
		ID         string
		Deprecated bool
	}
	wantOps, gotOps := map[string]op{}, map[string]op{}
	for _, r := range wire.Routes() {
		wantOps[r.Method+" "+r.Pattern] = op{r.Operation, r.Deprecated}
	}
	for path, methods := range doc.Paths {
		for method, o := range methods {
			gotOps[strings.ToUpper(method)+" "+path] = op{o.OperationID, o.Deprecated}
		}
	}
	if diff := cmp.Diff(wantOps, gotOps); diff != "" {
		t.Errorf("operations of the route table (-want) and of the document (+got):\n%s", diff)
	}

	// Every operation is authenticated, so it can answer these.
	authStatuses := []int{http.StatusUnauthorized, http.StatusForbidden, http.StatusInternalServerError, http.StatusServiceUnavailable}
	for _, r := range wire.Routes() {
		o, ok := doc.Paths[r.Pattern][strings.ToLower(r.Method)]
		if !ok {
			continue // reported above
		}
		name := r.Method + " " + r.Pattern
		for _, s := range authStatuses {
			if _, ok := o.Responses[strconv.Itoa(s)]; !ok {
				t.Errorf("%s: status %d, which authentication can answer, is not documented", name, s)
			}
		}
		for status, resp := range o.Responses {
			resp := doc.resolve(t, resp)
			n, err := strconv.Atoi(status)
			if err != nil {
				t.Errorf("%s: status %q is not a number", name, status)
				continue
			}
			if n >= 400 {
				m := documentedCode.FindStringSubmatch(resp.Description)
				if m == nil || httpapi.Code(m[1]).Status() != n {
					t.Errorf("%s %d: the description names no code of status %d: %q", name, n, n, resp.Description)
				}
			}
			for hname, h := range resp.Headers {
				if !strings.HasPrefix(h.Ref, "#/components/headers/") {
					t.Errorf("%s %d: header %s is defined in place, not referred to in the components", name, n, hname)
				}
			}
			for _, hname := range []string{"RateLimit-Policy", "RateLimit"} {
				if _, ok := resp.Headers[hname]; !ok {
					t.Errorf("%s %d: the answer documents no %s header", name, n, hname)
				}
			}
			_, hasDeprecation := resp.Headers["Deprecation"]
			authAnswer := n == http.StatusUnauthorized || n == http.StatusForbidden
			switch {
			case r.Deprecated && !authAnswer && !hasDeprecation:
				t.Errorf("%s %d: the operation is deprecated, but the answer documents no Deprecation header", name, n)
			case !r.Deprecated && hasDeprecation:
				t.Errorf("%s %d: the operation is not deprecated, but the answer documents a Deprecation header", name, n)
			}
		}
	}
}

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
	doc := readOpenAPIDoc(t)
	statuses := map[int]bool{405: true} // 405 is an answer of a path, not of an operation
	for _, ops := range doc.Paths {
		for _, op := range ops {
			for status := range op.Responses {
				n, err := strconv.Atoi(status)
				if err != nil {
					t.Fatalf("the OpenAPI document has a response %q that is not a status", status)
				}
				statuses[n] = true
			}
		}
	}
	codes := doc.Components.Schemas["Error"].Properties["code"].Enum
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

// documentedHeaders returns the names of the header parameters and of the
// response headers that the served OpenAPI document describes, in
// canonical form.
func documentedHeaders(t *testing.T) (request, response []string) {
	t.Helper()
	h := newHandler(t, memstore.New())
	w := serve(h, newRequest(t, http.MethodGet, "/v1"+wire.OpenAPIPath, "", nil))
	doc := decode[any](t, w)
	var walk func(v any, inResponse bool)
	walk = func(v any, inResponse bool) {
		switch v := v.(type) {
		case map[string]any:
			if v["in"] == "header" {
				request = append(request, http.CanonicalHeaderKey(v["name"].(string)))
			}
			if hs, ok := v["headers"].(map[string]any); ok && inResponse {
				for name := range hs {
					response = append(response, http.CanonicalHeaderKey(name))
				}
			}
			for k, e := range v {
				walk(e, inResponse || k == "responses")
			}
		case []any:
			for _, e := range v {
				walk(e, inResponse)
			}
		}
	}
	walk(doc, false)
	slices.Sort(request)
	slices.Sort(response)
	return slices.Compact(request), slices.Compact(response)
}

// canonical returns names in canonical form, sorted.
func canonical(names []string) []string {
	var out []string
	for _, n := range names {
		out = append(out, http.CanonicalHeaderKey(n))
	}
	slices.Sort(out)
	return out
}

// corsLists returns the lists of the CORS middleware for net/http in
// docs/http.md, checking that its rs/cors example gives the same.
func corsLists(t *testing.T) (allow, expose, methods []string) {
	t.Helper()
	doc, err := os.ReadFile("docs/http.md")
	if err != nil {
		t.Fatal(err)
	}
	find := func(re string) string {
		m := regexp.MustCompile(re).FindSubmatch(doc)
		if m == nil {
			t.Fatalf("docs/http.md has no match for %s", re)
		}
		return string(m[1])
	}
	names := strings.NewReplacer(`"`, " ", ",", " ") // lists of names, quoted or not
	constant := func(name string) []string {
		return strings.Fields(names.Replace(find(`(?m)^const ` + name + ` = "([^"]*)"$`)))
	}
	allow, expose, methods = constant("allow"), constant("expose"), constant("methods")
	for field, want := range map[string][]string{"AllowedHeaders": allow, "ExposedHeaders": expose, "AllowedMethods": methods} {
		list := strings.Fields(names.Replace(find(field + `: \[\]string\{([^}]*)\}`)))
		if diff := cmp.Diff(want, list); diff != "" {
			t.Errorf("docs/http.md: rs/cors's %s against the net/http example's (-net/http +rs/cors):\n%s", field, diff)
		}
	}
	return allow, expose, methods
}

// TestCORSHeadersCoverTheDocument checks docs/http.md's CORS lists against
// the OpenAPI document and the route table: the request headers to allow
// are the header parameters it describes, with Authorization (its security
// scheme) and Content-Type (its JSON request bodies); the response headers
// to expose are those it describes, with Allow (which it describes in words
// for the 405 of a method that a path does not list), but for
// Cache-Control, which CORS always exposes, and X-Content-Type-Options and
// Vary, which the browser itself acts on; the methods are every method that
// some path answers (the Allow values of the route table), once.
func TestCORSHeadersCoverTheDocument(t *testing.T) {
	request, response := documentedHeaders(t)
	wantRequest := canonical(append(request, "Authorization", "Content-Type"))
	wantResponse := canonical(slices.DeleteFunc(append(response, "Allow"), func(h string) bool {
		return h == "Cache-Control" || h == "X-Content-Type-Options" || h == "Vary"
	}))
	if len(wantResponse) < 5 {
		t.Fatalf("found only the response headers %q in the document", wantResponse)
	}
	var wantMethods []string
	for _, r := range wire.Routes() {
		wantMethods = append(wantMethods, strings.Split(wire.Allow(r.Pattern), ", ")...)
	}
	allow, expose, methods := corsLists(t)
	for _, l := range []struct {
		what      string
		want, got []string
	}{
		{"the headers to allow against the document", wantRequest, canonical(allow)},
		{"the headers to expose against the document", wantResponse, canonical(expose)},
		{"the methods to allow against the route table", slices.Compact(sorted(wantMethods)), sorted(methods)},
	} {
		if diff := cmp.Diff(l.want, l.got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", l.what, diff)
		}
	}
}
