package petstore_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gorilla/mux"
	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/memstore"
	"github.com/petstore-go/petstore/petstoretest"
)

// mountScenario runs all three operations against a server at base (an
// absolute URL ending in the API's base path), following the Location and
// Link headers it gets back, and checks what it sees.
func mountScenario(t *testing.T, c *http.Client, base, key string) {
	t.Helper()
	do := func(method, target, body string) *http.Response {
		t.Helper()
		r, err := http.NewRequest(method, target, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		r.Header.Set("Authorization", "Bearer "+key)
		r.Header.Set("Content-Type", "application/json")
		resp, err := c.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	var created []string
	for _, name := range []string{"a", "b", "c"} {
		resp := do("POST", base+"/pets", `{"name":"`+name+`","categoryId":1}`)
		if resp.StatusCode != 201 {
			t.Fatalf("POST %s/pets = %d", base, resp.StatusCode)
		}
		loc, err := resp.Request.URL.Parse(resp.Header.Get("Location"))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		got := do("GET", loc.String(), "")
		gotBody, _ := io.ReadAll(got.Body)
		if got.StatusCode != 200 || string(gotBody) != string(body) {
			t.Errorf("GET Location %s = %d %s, want 200 %s", loc, got.StatusCode, gotBody, body)
		}
		created = append(created, name)
	}
	var names []string
	for target := base + "/pets?limit=2"; target != ""; {
		resp := do("GET", target, "")
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s = %d", target, resp.StatusCode)
		}
		var page []petstore.Pet
		if err := json.NewDecoder(resp.Body).Decode(&page); err != nil {
			t.Fatal(err)
		}
		for _, p := range page {
			names = append(names, p.Name)
		}
		target = ""
		if link := resp.Header.Get("Link"); link != "" {
			next, err := resp.Request.URL.Parse(nextLink(t, link))
			if err != nil {
				t.Fatal(err)
			}
			target = next.String()
		}
	}
	if strings.Join(names, ",") != strings.Join(created, ",") {
		t.Errorf("listed %q by following Link, want %q", names, created)
	}
}

// TestMountAsTheReadmeShows mounts the handler under gorilla/mux and
// http.ServeMux as the README's recipes do (contracttest mounts it under
// chi), and runs the conformance suite through each router.
func TestMountAsTheReadmeShows(t *testing.T) {
	api := newHandler(t, memstore.New(), petstore.WithBasePath("/api/v1"))
	r := mux.NewRouter() // gorilla/mux
	r.PathPrefix("/api/v1/").Handler(api)

	m := http.NewServeMux() // net/http
	m.Handle("/api/v1/", api)

	for name, h := range map[string]http.Handler{"gorilla-mux": r, "servemux": m} {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(h)
			defer srv.Close()
			petstoretest.TestServer(t, petstoretest.Endpoint{BaseURL: srv.URL + "/api/v1", APIKey: testKey})
		})
	}
}

func TestMountUnderGorillaMux(t *testing.T) {
	r := mux.NewRouter()
	r.PathPrefix("/api/animals/v1/").Handler(newHandler(t, memstore.New(), petstore.WithBasePath("/api/animals/v1")))
	r.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {})
	srv := httptest.NewServer(r)
	defer srv.Close()
	mountScenario(t, srv.Client(), srv.URL+"/api/animals/v1", testKey)
}

func TestMountUnderServeMuxWithStripPrefix(t *testing.T) {
	m := http.NewServeMux()
	m.Handle("/zoo/", http.StripPrefix("/zoo", newHandler(t, memstore.New())))
	srv := httptest.NewServer(m)
	defer srv.Close()
	mountScenario(t, srv.Client(), srv.URL+"/zoo/v1", testKey)
}

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
	srv := httptest.NewServer(r)
	defer srv.Close()
	mountScenario(t, srv.Client(), srv.URL+"/v1", testKey)
	if seen.Load() < 6 {
		t.Errorf("the middleware saw %d requests, want at least 6", seen.Load())
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
	srv := httptest.NewServer(m)
	defer srv.Close()
	mountScenario(t, srv.Client(), srv.URL+"/a/v1", testKey)

	get := func(target, key string) (int, string) {
		r, _ := http.NewRequest("GET", srv.URL+target, nil)
		r.Header.Set("Authorization", "Bearer "+key)
		resp, err := srv.Client().Do(r)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("/b/v1/pets", "other"); code != 200 || body != "[]\n" {
		t.Errorf("second handler lists %d %s, want 200 []", code, body)
	}
	if code, _ := get("/b/v1/pets/1", "other"); code != 404 {
		t.Errorf("second handler gets pet 1: %d, want 404", code)
	}
	if code, _ := get("/b/v1/pets", testKey); code != 401 {
		t.Errorf("second handler accepts the first one's key: %d, want 401", code)
	}
}
