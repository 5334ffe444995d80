package petstore_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/memstore"
)

// tenantStore wraps a memstore the ordinary Go way, by embedding it, and
// overrides List to hide the pets of category 2, as a host hiding another
// tenant's pets would.
type tenantStore struct {
	*memstore.Store
}

var _ petstore.Store = tenantStore{}

func (s tenantStore) List(ctx context.Context, opts petstore.ListOptions) ([]petstore.Pet, error) {
	pets, err := s.Store.List(ctx, petstore.ListOptions{Status: opts.Status, After: opts.After})
	if err != nil {
		return nil, err
	}
	var mine []petstore.Pet
	for _, p := range pets {
		if p.CategoryID != 2 && (opts.Limit == 0 || len(mine) < opts.Limit) {
			mine = append(mine, p)
		}
	}
	return mine, nil
}

// TestEmbeddedStoreIsServedThroughItsOverride checks that the handler lists
// a Store that embeds *memstore.Store through the Store's own List, not
// through any method promoted from memstore.
func TestEmbeddedStoreIsServedThroughItsOverride(t *testing.T) {
	store := tenantStore{memstore.New()}
	var want []petstore.Pet
	for i := range 6 {
		if p := mustAdd(t, store, petstore.NewPet{Name: "pet", CategoryID: int64(i%3 + 1)}); p.CategoryID != 2 {
			want = append(want, p)
		}
	}
	h := newHandler(t, store)
	for _, target := range []string{"/v1/pets", "/v1/pets?limit=100"} {
		w := serve(h, newRequest(t, http.MethodGet, target, "", nil))
		if w.Code != http.StatusOK {
			t.Fatalf("GET %s: %d %s", target, w.Code, w.Body)
		}
		if diff := cmp.Diff(want, decode[[]petstore.Pet](t, w)); diff != "" {
			t.Errorf("GET %s lists what the override hides (-want +got):\n%s", target, diff)
		}
	}
}
