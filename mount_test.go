package petstore_test

import (
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gorilla/mux"
	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/memstore"
	"github.com/petstore-go/petstore/petstoretest"
)

// TestMountBehindHostMiddleware wraps the handler in a gorilla/mux
// middleware that counts requests and adds a header, as hosts do for
// logging and tracing.
func TestMountBehindHostMiddleware(t *testing.T) {
	var seen atomic.Int64
	r := mux.NewRouter()
	r.Use(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			seen.Add(1)
			w.Header().Set("X-Request-Id", "42")
			next.ServeHTTP(w, r)
		})
	})
	r.PathPrefix("/v1/").Handler(newHandler(t, memstore.New()))
	srv := newServer(t, r)
	petstoretest.TestServer(t, petstoretest.Endpoint{BaseURL: srv.URL + "/v1", APIKey: testKey, Client: srv.Client()})
	if seen.Load() == 0 {
		t.Error("the middleware saw no request")
	}
	resp, err := srv.Client().Get(srv.URL + "/v1/pets")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.Header.Get("X-Request-Id") != "42" || resp.StatusCode != 401 {
		t.Errorf("got %d with X-Request-Id %q; the host's header must survive the handler's answer", resp.StatusCode, resp.Header.Get("X-Request-Id"))
	}
}

// TestTwoHandlersShareNothing mounts two handlers on their own stores in one
// process and checks that neither sees the other's pets or keys.
func TestTwoHandlersShareNothing(t *testing.T) {
	m := http.NewServeMux()
	m.Handle("/a/", newHandler(t, memstore.New(), petstore.WithBasePath("/a/v1")))
	m.Handle("/b/", newHandler(t, memstore.New(), petstore.WithAuthenticator(petstore.APIKeys("other")), petstore.WithBasePath("/b/v1")))
	srv := newServer(t, m)
	do := func(method, target, key, body string) (int, string) {
		r, _ := http.NewRequest(method, srv.URL+target, strings.NewReader(body))
		r.Header.Set("Authorization", "Bearer "+key)
		r.Header.Set("Content-Type", "application/json")
		resp, err := srv.Client().Do(r)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := do("POST", "/a/v1/pets", testKey, `{"name":"a","categoryId":1}`); code != 201 {
		t.Fatalf("first handler creates: %d %s", code, body)
	}
	if code, body := do("GET", "/b/v1/pets", "other", ""); code != 200 || body != "[]\n" {
		t.Errorf("second handler lists %d %s, want 200 []", code, body)
	}
	if code, _ := do("GET", "/b/v1/pets/1", "other", ""); code != 404 {
		t.Errorf("second handler gets pet 1: %d, want 404", code)
	}
	if code, _ := do("GET", "/b/v1/pets", testKey, ""); code != 401 {
		t.Errorf("second handler accepts the first one's key: %d, want 401", code)
	}
}
