package petstore_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/httpapi"
	"github.com/petstore-go/petstore/internal/wire"
	"github.com/petstore-go/petstore/memstore"
)

// TestMessagesNameBasePath: a message that names a path names it under the
// handler's base path, as a client must send it.
func TestMessagesNameBasePath(t *testing.T) {
	tests := []struct{ base, target, message string }{
		{"/v1", "/v1/pets/99", "no pet has ID 99; list pets with GET /v1/pets"},
		{"/api/v2", "/api/v2/pets/99", "no pet has ID 99; list pets with GET /api/v2/pets"},
		{"", "/pets/99", "no pet has ID 99; list pets with GET /pets"},
		{"/api/v2", "/api/v2/orders", "no such path; the API serves /api/v2/pets and /api/v2/pets/{petId}"},
	}
	for _, tt := range tests {
		t.Run(tt.target, func(t *testing.T) {
			env := newEnv(t, petstore.WithBasePath(tt.base))
			w := env.serve(newRequest(t, http.MethodGet, tt.target, "", nil))
			checkResponse(t, w)
			got := decode[httpapi.Error](t, w)
			want := httpapi.Error{Code: httpapi.CodeNotFound, Status: 404, Message: tt.message,
				Type: httpapi.CodeNotFound.Type(), Title: httpapi.CodeNotFound.Title()}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("error body (-want +got):\n%s", diff)
			}
		})
	}
}

// TestLongMethodCut: a 4,000-byte method is cut to 64 bytes, with a marker
// and its length, in the 405's message and in the Observation, so that it
// reaches neither the client nor a log in full.
func TestLongMethodCut(t *testing.T) {
	method := strings.Repeat("G", 4000)
	cut := strings.Repeat("G", 64) + "…[4000 bytes]"
	var observed petstore.Observation
	h := newHandler(t, memstore.New(), petstore.WithObserver(func(_ context.Context, o petstore.Observation) { observed = o }))
	w := serve(h, newRequest(t, method, "/v1/pets", "", nil))
	checkResponse(t, w)
	got := decode[httpapi.Error](t, w)
	want := httpapi.Error{Code: httpapi.CodeMethodNotAllowed, Status: 405,
		Message: "method " + cut + " is not allowed here; use one of " + wire.Allow("/pets")}
	want.Type, want.Title = want.Code.Type(), want.Code.Title()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("error body (-want +got):\n%s", diff)
	}
	if observed.Method != cut {
		t.Errorf("Observation.Method = %q, want %q", observed.Method, cut)
	}
	// A method of ordinary length is kept as sent.
	serve(h, newRequest(t, "BREW", "/v1/pets", "", nil))
	if observed.Method != "BREW" {
		t.Errorf("Observation.Method = %q, want BREW", observed.Method)
	}
}
