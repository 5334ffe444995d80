package petstore_test

import (
	"context"
	"net/http"
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
// principal and deprecation, and never a credential nor a method in full.
func TestObserver(t *testing.T) {
	var mu sync.Mutex
	var got []petstore.Observation
	h := newHandler(t, memstore.New(), petstore.WithObserver(func(_ context.Context, o petstore.Observation) {
		if o.Duration <= 0 {
			t.Errorf("%s %s: duration %v", o.Method, o.Route, o.Duration)
		}
		mu.Lock()
		got = append(got, o)
		mu.Unlock()
	}))
	principal := fingerprint("key", testKey)
	wrongKey := http.Header{"Authorization": {"Bearer wrong"}}
	for _, q := range []struct {
		method, target, body string
		header               http.Header
	}{
		{"POST", "/v1/pets", `{"name":"Rex","categoryId":1}`, nil},
		{"GET", "/v1/pets?limit=5", "", nil},
		{"HEAD", "/v1/pets", "", nil},
		{"GET", "/v1/pets/1", "", nil},
		{"GET", "/v1/pets/2", "", nil},
		{"GET", "/v1/pets/1", "", wrongKey},
		{"DELETE", "/v1/pets", "", nil},
		{"GET", "/v1/orders", "", nil},
		{"GET", "/v1/openapi.json", "", http.Header{"Authorization": nil}},
		{strings.Repeat("G", 4000), "/v1/pets", "", nil},
		{"BREW", "/v1/pets", "", nil},
	} {
		serve(h, newRequest(t, q.method, q.target, q.body, q.header))
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
		// A 4,000-byte method is cut, as in the 405's message (TestWire), so that it
		// reaches no log in full; a method of ordinary length is kept as sent.
		{Operation: petstore.OpNone, Route: "/v1/pets", Method: longMethodCut, Status: 405, Code: httpapi.CodeMethodNotAllowed, Principal: principal},
		{Operation: petstore.OpNone, Route: "/v1/pets", Method: "BREW", Status: 405, Code: httpapi.CodeMethodNotAllowed, Principal: principal},
	}
	if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(petstore.Observation{}, "Duration")); diff != "" {
		t.Errorf("observations (-want +got):\n%s", diff)
	}
}

// longMethodCut is how the handler names a method of 4,000 Gs: cut to 64
// bytes, with a marker and its length.
var longMethodCut = strings.Repeat("G", 64) + "…[4000 bytes]"
