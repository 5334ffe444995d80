package petstore_test

import (
	"net/http"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/internal/wire"
)

// TestAppendCursor checks that AppendCursor makes the cursor of the Link
// of a page that ends with a pet, and that the handler answers it with the
// pets after that pet.
func TestAppendCursor(t *testing.T) {
	env := newEnv(t)
	all := snapshot(t, env.store)
	for _, n := range []int{1, 2, 7} {
		last := all[n-1].ID
		w := env.serve(newRequest(t, http.MethodGet, "/v1/pets?limit="+strconv.Itoa(n), "", nil))
		checkResponse(t, w)
		want := `<?limit=` + strconv.Itoa(n) + `&cursor=` + string(wire.AppendCursor(nil, last)) + `>; rel="next"`
		if got := w.Header().Get("Link"); got != want {
			t.Errorf("limit %d: Link %q, want %q", n, got, want)
		}
		w = env.serve(newRequest(t, http.MethodGet, "/v1/pets?limit=100&cursor="+string(wire.AppendCursor(nil, last)), "", nil))
		checkResponse(t, w)
		got := decode[[]petstore.Pet](t, w)
		if diff := cmp.Diff(all[n:], got); diff != "" {
			t.Errorf("the pets after ID %d (-want +got):\n%s", last, diff)
		}
	}
	if got, want := string(wire.AppendCursor([]byte("x="), 36)), "x="+string(wire.AppendCursor(nil, 36)); got != want {
		t.Errorf("AppendCursor(x=, 36) = %q, want %q", got, want)
	}
}
