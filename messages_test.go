package petstore_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/httpapi"
	"github.com/petstore-go/petstore/internal/wire"
	"github.com/petstore-go/petstore/memstore"
)

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
