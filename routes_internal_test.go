package petstore

import (
	"net/http"
	"slices"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/petstore-go/petstore/internal/wire"
)

// TestAllowOf checks how the Allow value of a pattern is derived from the
// route table: the methods of its routes in their order, each GET followed
// by HEAD, and "" for a pattern without routes.
func TestAllowOf(t *testing.T) {
	routes := []route{
		{method: http.MethodGet, pattern: "/a"},
		{method: http.MethodPost, pattern: "/a"},
		{method: http.MethodDelete, pattern: "/b"},
		{method: http.MethodPut, pattern: "/c"},
		{method: http.MethodGet, pattern: "/c"},
	}
	tests := []struct{ pattern, want string }{
		{"/a", "GET, HEAD, POST"},
		{"/b", "DELETE"},
		{"/c", "PUT, GET, HEAD"},
		{"/d", ""},
	}
	for _, tt := range tests {
		if got := allowOf(routes, tt.pattern); got != tt.want {
			t.Errorf("allowOf(%s) = %q, want %q", tt.pattern, got, tt.want)
		}
	}
}

// TestRouterNotFound checks that the message of a 404 names the API's
// resources, from the route table, and not the public ones.
func TestRouterNotFound(t *testing.T) {
	tests := []struct {
		routes []route
		want   string
	}{
		{[]route{{method: http.MethodGet, pattern: "/a"}}, "no such path; the API serves /v1/a"},
		{[]route{{method: http.MethodGet, pattern: "/a"}, {method: http.MethodPost, pattern: "/a"}, {method: http.MethodGet, pattern: "/a/{id}"}},
			"no such path; the API serves /v1/a and /v1/a/{id}"},
		{[]route{{method: http.MethodGet, pattern: "/a"}, {method: http.MethodGet, pattern: "/b"}, {method: http.MethodGet, pattern: "/c"}, {method: http.MethodGet, pattern: "/doc", public: true}},
			"no such path; the API serves /v1/a, /v1/b and /v1/c"},
	}
	for _, tt := range tests {
		if got := newRouter("/v1", tt.routes).notFound; got != tt.want {
			t.Errorf("notFound = %q, want %q", got, tt.want)
		}
	}
}

// TestRoutesAreTheTable checks that apiRoutes serves every row of
// wire.Routes, each with one of the Operations and a serve function, that
// wire.Allow agrees with the default handler's, and that a public route is
// no operation.
func TestRoutesAreTheTable(t *testing.T) {
	var want []wire.Route
	for _, r := range apiRoutes() {
		want = append(want, wire.Route{Method: r.method, Pattern: r.pattern, Operation: string(r.op), Deprecated: r.deprecated})
		if r.public || !slices.Contains([]Operation{OpListPets, OpCreatePet, OpGetPet}, r.op) || r.serve == nil {
			t.Errorf("API route %s %s: public %v, operation %q; an API route is authenticated, has an operation and serves it", r.method, r.pattern, r.public, r.op)
		}
	}
	if diff := cmp.Diff(want, wire.Routes()); diff != "" {
		t.Errorf("wire.Routes (-want +got):\n%s", diff)
	}
	c := defaultConfig()
	for _, p := range []string{"/pets", "/pets/{petId}", wire.OpenAPIPath, "/nowhere"} {
		if got, want := wire.Allow(p), allowOf(handlerRoutes(&c), p); got != want {
			t.Errorf("wire.Allow(%q) = %q, the default handler's %q", p, got, want)
		}
	}
	var err error
	c.docs, err = docsRoutes(fstest.MapFS{"index.html": {}, "page.js": {}})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range handlerRoutes(&c)[len(want):] {
		if !r.public || r.op != OpNone {
			t.Errorf("route %s %s: public %v, operation %q; a route beside the API is public with OpNone", r.method, r.pattern, r.public, r.op)
		}
	}
}
