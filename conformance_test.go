package petstore_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gorilla/mux"
	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/internal/testkit/loadtest"
	"github.com/petstore-go/petstore/memstore"
	"github.com/petstore-go/petstore/petstoretest"
)

// TestConformanceServer runs the HTTP conformance suite against the handler
// mounted as hosts mount it: on its own at /v1 (empty, and holding other
// pets), under a longer prefix behind a gorilla/mux router and a host's
// middleware, and under
// http.ServeMux as the README shows and with http.StripPrefix
// (contracttest mounts it under chi).
func TestConformanceServer(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mount  func(t *testing.T) http.Handler
		path   string // the base path as clients see it
		max    int64  // the body limit, when not the default
		runs   int    // how many times to run the suite on the same server; 0 means once
		header string // a header that the host sets, which must survive the handler's answers
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
			// Behind a middleware that counts requests and adds a header, as
			// hosts do for logging and tracing.
			name: "gorilla-mux-prefix",
			mount: func(t *testing.T) http.Handler {
				r := mux.NewRouter()
				r.Use(func(next http.Handler) http.Handler {
					return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
						w.Header().Set("X-Request-Id", "42")
						next.ServeHTTP(w, r)
					})
				})
				h := newHandler(t, memstore.New(), petstore.WithBasePath("/api/animals/v1"), petstore.WithMaxBodyBytes(4096))
				r.PathPrefix("/api/animals/v1").Handler(h)
				return r
			},
			path:   "/api/animals/v1",
			max:    4096,
			header: "X-Request-Id",
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
			if resp, _ := fetch(t, srv, srv.URL+tc.path+"/pets", nil); tc.header != "" && (resp.StatusCode != 401 || resp.Header.Get(tc.header) == "") {
				t.Errorf("got %d without %s; the host's header must survive the handler's answer", resp.StatusCode, tc.header)
			}
		})
	}
}

// TestTwoHandlersShareNothing mounts two handlers on their own stores in one
// process and checks that neither sees the other's pets or keys.
func TestTwoHandlersShareNothing(t *testing.T) {
	m := http.NewServeMux()
	m.Handle("/a/", newHandler(t, memstore.New(), petstore.WithBasePath("/a/v1")))
	m.Handle("/b/", newHandler(t, memstore.New(), petstore.WithAuthenticator(petstore.APIKeys("other")), petstore.WithBasePath("/b/v1")))
	do := func(method, target, key, body string) *httptest.ResponseRecorder {
		return serve(m, newRequest(t, method, target, body, http.Header{"Authorization": {"Bearer " + key}}))
	}
	if w := do("POST", "/a/v1/pets", testKey, `{"name":"a","categoryId":1}`); w.Code != 201 {
		t.Fatalf("first handler creates: %d %s", w.Code, w.Body)
	}
	if w := do("GET", "/b/v1/pets", "other", ""); w.Code != 200 || w.Body.String() != "[]\n" {
		t.Errorf("second handler lists %d %s, want 200 []", w.Code, w.Body)
	}
	if w := do("GET", "/b/v1/pets/1", "other", ""); w.Code != 404 {
		t.Errorf("second handler gets pet 1: %d, want 404", w.Code)
	}
	if w := do("GET", "/b/v1/pets", testKey, ""); w.Code != 401 {
		t.Errorf("second handler accepts the first one's key: %d, want 401", w.Code)
	}
}

// TestLoadMemstore has 64 concurrent clients make 100,000 creates, mixed
// with lists and gets, through a real server on loopback, then checks that
// every acknowledged pet is stored exactly once with the fields it was
// created with, and nothing else is. PETSTORE_LOAD_CREATES changes the
// number of creates.
func TestLoadMemstore(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping the 100,000-create load test in -short mode; run go test without -short for it")
	}
	loadtest.TestStore(t, "memstore", memstore.New())
}
