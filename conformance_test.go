package petstore_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gorilla/mux"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/memstore"
	"github.com/petstore-go/petstore/petstoretest"
)

// conformanceKey is the API key of the servers that TestConformanceServer
// checks.
const conformanceKey = "conformance-key"

// conformanceHandler returns the handler on a new memstore with
// conformanceKey and opts.
func conformanceHandler(t *testing.T, opts ...petstore.Option) http.Handler {
	t.Helper()
	opts = append([]petstore.Option{
		petstore.WithStore(memstore.New()),
		petstore.WithAuthenticator(petstore.APIKeys(conformanceKey)),
	}, opts...)
	h, err := petstore.New(opts...)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestConformanceServer runs the HTTP conformance suite against the handler
// mounted as hosts mount it: on its own at /v1, under a longer prefix behind
// a gorilla/mux router, and under http.ServeMux with http.StripPrefix.
func TestConformanceServer(t *testing.T) {
	for _, tc := range []struct {
		name  string
		mount func(t *testing.T) http.Handler
		path  string // the base path as clients see it
		max   int64  // the body limit, when not the default
	}{
		{
			name:  "v1",
			mount: func(t *testing.T) http.Handler { return conformanceHandler(t) },
			path:  "/v1",
		},
		{
			name: "gorilla-mux-prefix",
			mount: func(t *testing.T) http.Handler {
				r := mux.NewRouter()
				h := conformanceHandler(t, petstore.WithBasePath("/api/animals/v1"), petstore.WithMaxBodyBytes(4096))
				r.PathPrefix("/api/animals/v1").Handler(h)
				return r
			},
			path: "/api/animals/v1",
			max:  4096,
		},
		{
			name: "servemux-strip-prefix",
			mount: func(t *testing.T) http.Handler {
				m := http.NewServeMux()
				m.Handle("/v1/", http.StripPrefix("/v1", conformanceHandler(t, petstore.WithBasePath(""))))
				return m
			},
			path: "/v1",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(tc.mount(t))
			t.Cleanup(srv.Close)
			petstoretest.TestServer(t, petstoretest.Endpoint{
				BaseURL:      srv.URL + tc.path,
				APIKey:       conformanceKey,
				Client:       srv.Client(),
				MaxBodyBytes: tc.max,
			})
		})
	}
}
