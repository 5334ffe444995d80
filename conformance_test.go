package petstore_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/gorilla/mux"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/memstore"
	"github.com/petstore-go/petstore/petstoretest"
)

// TestConformanceServer runs the HTTP conformance suite against the handler
// mounted as hosts mount it: on its own at /v1 (empty, and holding other
// pets), under a longer prefix behind a gorilla/mux router, and under
// http.ServeMux as the README shows and with http.StripPrefix
// (contracttest mounts it under chi).
func TestConformanceServer(t *testing.T) {
	for _, tc := range []struct {
		name  string
		mount func(t *testing.T) http.Handler
		path  string // the base path as clients see it
		max   int64  // the body limit, when not the default
		runs  int    // how many times to run the suite on the same server; 0 means once
	}{
		{name: "v1", mount: func(t *testing.T) http.Handler { return newHandler(t, memstore.New()) }, path: "/v1"},
		{
			// The suite does not assume an empty store: it finds its pets
			// among more than two pages of others, also its own of a run
			// before.
			name: "v1-non-empty",
			mount: func(t *testing.T) http.Handler {
				store := memstore.New()
				statuses := []petstore.Status{"", petstore.StatusAvailable, petstore.StatusPending, petstore.StatusSold}
				for i := range 250 {
					mustAdd(t, store, petstore.NewPet{Name: fmt.Sprintf("resident %d", i), CategoryID: 1, Status: statuses[i%len(statuses)]})
				}
				return newHandler(t, store)
			},
			path: "/v1",
			runs: 2,
		},
		{
			name: "gorilla-mux-prefix",
			mount: func(t *testing.T) http.Handler {
				r := mux.NewRouter()
				h := newHandler(t, memstore.New(), petstore.WithBasePath("/api/animals/v1"), petstore.WithMaxBodyBytes(4096))
				r.PathPrefix("/api/animals/v1").Handler(h)
				return r
			},
			path: "/api/animals/v1",
			max:  4096,
		},
		{
			name: "servemux",
			mount: func(t *testing.T) http.Handler {
				m := http.NewServeMux()
				m.Handle("/api/v1/", newHandler(t, memstore.New(), petstore.WithBasePath("/api/v1")))
				return m
			},
			path: "/api/v1",
		},
		{
			name: "servemux-strip-prefix",
			mount: func(t *testing.T) http.Handler {
				m := http.NewServeMux()
				m.Handle("/v1/", http.StripPrefix("/v1", newHandler(t, memstore.New(), petstore.WithBasePath(""))))
				return m
			},
			path: "/v1",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newServer(t, tc.mount(t))
			for range max(tc.runs, 1) {
				petstoretest.TestServer(t, petstoretest.Endpoint{
					BaseURL:      srv.URL + tc.path,
					APIKey:       testKey,
					Client:       srv.Client(),
					MaxBodyBytes: tc.max,
				})
			}
		})
	}
}
