package petstore_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/httpapi"
	"github.com/petstore-go/petstore/memstore"
)

// TestObserver checks that the observer sees every request once, after it
// is answered, with its operation, route template, method, status, code,
// principal and deprecation, and never a credential.
func TestObserver(t *testing.T) {
	var mu sync.Mutex
	var got []petstore.Observation
	h, err := petstore.New(petstore.WithStore(memstore.New()), petstore.WithAuthenticator(petstore.APIKeys("key")),
		petstore.WithObserver(func(_ context.Context, o petstore.Observation) {
			if o.Duration <= 0 {
				t.Errorf("%s %s: duration %v", o.Method, o.Route, o.Duration)
			}
			mu.Lock()
			got = append(got, o)
			mu.Unlock()
		}))
	if err != nil {
		t.Fatal(err)
	}
	ctx, err := petstore.APIKeys("key").Authenticate(t.Context(), petstore.OpListPets, "key")
	if err != nil {
		t.Fatal(err)
	}
	principal := petstore.Principal(ctx)
	for _, q := range []struct{ method, target, key, body string }{
		{"POST", "/v1/pets", "key", `{"name":"Rex","categoryId":1}`},
		{"GET", "/v1/pets?limit=5", "key", ""},
		{"HEAD", "/v1/pets", "key", ""},
		{"GET", "/v1/pets/1", "key", ""},
		{"GET", "/v1/pets/2", "key", ""},
		{"GET", "/v1/pets/1", "wrong", ""},
		{"DELETE", "/v1/pets", "key", ""},
		{"GET", "/v1/orders", "key", ""},
		{"GET", "/v1/openapi.json", "", ""},
	} {
		r := httptest.NewRequest(q.method, q.target, strings.NewReader(q.body))
		if q.key != "" {
			r.Header.Set("Authorization", "Bearer "+q.key)
		}
		r.Header.Set("Content-Type", "application/json")
		h.ServeHTTP(httptest.NewRecorder(), r)
	}
	want := []petstore.Observation{
		{Operation: petstore.OpCreatePet, Route: "/v1/pets", Method: "POST", Status: 201, Principal: principal},
		{Operation: petstore.OpListPets, Route: "/v1/pets", Method: "GET", Status: 200, Principal: principal},
		{Operation: petstore.OpListPets, Route: "/v1/pets", Method: "HEAD", Status: 200, Principal: principal},
		{Operation: petstore.OpGetPet, Route: "/v1/pets/{petId}", Method: "GET", Status: 200, Principal: principal, Deprecated: true},
		{Operation: petstore.OpGetPet, Route: "/v1/pets/{petId}", Method: "GET", Status: 404, Code: httpapi.CodeNotFound, Principal: principal, Deprecated: true},
		{Operation: petstore.OpGetPet, Route: "/v1/pets/{petId}", Method: "GET", Status: 401, Code: httpapi.CodeUnauthorized, Deprecated: true},
		{Operation: petstore.OpNone, Route: "/v1/pets", Method: "DELETE", Status: 405, Code: httpapi.CodeMethodNotAllowed, Principal: principal},
		{Operation: petstore.OpNone, Route: "", Method: "GET", Status: 404, Code: httpapi.CodeNotFound, Principal: principal},
		{Operation: petstore.OpNone, Route: "/v1/openapi.json", Method: "GET", Status: 200},
	}
	if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(petstore.Observation{}, "Duration")); diff != "" {
		t.Errorf("observations (-want +got):\n%s", diff)
	}
}

// TestObserverSeesPanics checks that a request whose store panics is
// observed as the 500 it was answered with.
func TestObserverSeesPanics(t *testing.T) {
	var got petstore.Observation
	h, err := petstore.New(petstore.WithStore(panicStore{}), petstore.WithAuthenticator(petstore.APIKeys("key")),
		petstore.WithObserver(func(_ context.Context, o petstore.Observation) { got = o }))
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest(http.MethodGet, "/v1/pets", nil)
	r.Header.Set("Authorization", "Bearer key")
	h.ServeHTTP(httptest.NewRecorder(), r)
	if got.Status != 500 || got.Code != httpapi.CodeInternal || got.Operation != petstore.OpListPets {
		t.Errorf("observed %+v, want a 500 internal of listPets", got)
	}
}

// panicStore is a Store whose every method panics.
type panicStore struct{}

func (panicStore) Add(context.Context, petstore.NewPet, petstore.AddOptions) (petstore.Pet, bool, error) {
	panic("boom")
}
func (panicStore) Get(context.Context, int64) (petstore.Pet, error) { panic("boom") }
func (panicStore) List(context.Context, petstore.ListOptions) ([]petstore.Pet, error) {
	panic("boom")
}
