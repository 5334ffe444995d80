package petstore_test

import (
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/petstore-go/petstore/internal/wire"
	"github.com/petstore-go/petstore/memstore"
)

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
// the OpenAPI document: the request headers to allow are the header
// parameters it describes, with Authorization (its security scheme) and
// Content-Type (its JSON request bodies); the response headers to expose
// are those it describes, with Allow (which it describes in words for the
// 405 of a method that a path does not list), but for Cache-Control, which
// CORS always exposes, and X-Content-Type-Options and Vary, which the
// browser itself acts on.
func TestCORSHeadersCoverTheDocument(t *testing.T) {
	request, response := documentedHeaders(t)
	wantRequest := canonical(append(request, "Authorization", "Content-Type"))
	wantResponse := canonical(slices.DeleteFunc(append(response, "Allow"), func(h string) bool {
		return h == "Cache-Control" || h == "X-Content-Type-Options" || h == "Vary"
	}))
	if len(wantResponse) < 5 {
		t.Fatalf("found only the response headers %q in the document", wantResponse)
	}
	allow, expose, _ := corsLists(t)
	if diff := cmp.Diff(wantRequest, canonical(allow)); diff != "" {
		t.Errorf("the headers to allow against the document (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantResponse, canonical(expose)); diff != "" {
		t.Errorf("the headers to expose against the document (-want +got):\n%s", diff)
	}
}

// TestCORSMethodsAreTheRoutes checks docs/http.md's CORS methods against
// the Allow values of the route table: every method that some path
// answers, once.
func TestCORSMethodsAreTheRoutes(t *testing.T) {
	var want []string
	for _, r := range wire.Routes() {
		want = append(want, strings.Split(wire.Allow(r.Pattern), ", ")...)
	}
	slices.Sort(want)
	want = slices.Compact(want)
	_, _, got := corsLists(t)
	slices.Sort(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the methods to allow against the route table (-want +got):\n%s", diff)
	}
}
