package petstore_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/memstore"
)

// onceBlockingStore is a memstore whose first Add waits until release is
// closed; the others do not wait.
type onceBlockingStore struct {
	*memstore.Store
	entered, release chan struct{}
	started          *atomic.Bool
}

var _ petstore.Store = onceBlockingStore{}

func (s onceBlockingStore) Add(ctx context.Context, p petstore.NewPet, opts petstore.AddOptions) (petstore.Pet, bool, error) {
	if s.started.CompareAndSwap(false, true) {
		close(s.entered)
		<-s.release
	}
	return s.Store.Add(ctx, p, opts)
}

// TestIdempotencyKeyInUse: while a create with a key runs, another with the
// same key from the same caller is answered 409 with Retry-After and does
// not reach the store; the same key from another caller is another key.
func TestIdempotencyKeyInUse(t *testing.T) {
	store := onceBlockingStore{memstore.New(), make(chan struct{}), make(chan struct{}), new(atomic.Bool)}
	h := newHandler(t, store, petstore.WithAuthenticator(petstore.APIKeys(testKey, "other-key")))
	keyed := func(apiKey string) http.Header {
		return http.Header{"Idempotency-Key": {"k-1"}, "Authorization": {"Bearer " + apiKey}}
	}
	first := make(chan int)
	go func() {
		first <- serve(h, newRequest(t, http.MethodPost, "/v1/pets", `{"name":"Rex","categoryId":1}`, keyed(testKey))).Code
	}()
	<-store.entered
	w := serve(h, newRequest(t, http.MethodPost, "/v1/pets", `{"name":"Rex","categoryId":1}`, keyed(testKey)))
	if code := checkResponse(t, w); w.Code != http.StatusConflict || code != "idempotency_key_in_use" || w.Header().Get("Retry-After") != "1" {
		t.Errorf("retry while the first runs: %d %s, Retry-After %q; want 409 idempotency_key_in_use with Retry-After 1", w.Code, code, w.Header().Get("Retry-After"))
	}
	w = serve(h, newRequest(t, http.MethodPost, "/v1/pets", `{"name":"Rex","categoryId":1}`, keyed("other-key")))
	if w.Code != http.StatusCreated {
		t.Errorf("the same key from another caller: %d %s, want 201", w.Code, w.Body)
	}
	close(store.release)
	if code := <-first; code != http.StatusCreated {
		t.Errorf("the first create: %d, want 201", code)
	}
	// Once the first is over, its key replays.
	w = serve(h, newRequest(t, http.MethodPost, "/v1/pets", ` { "categoryId" : 1, "name" : "Rex" } `, keyed(testKey)))
	got := []string{w.Header().Get("Location"), w.Header().Get("Idempotent-Replayed")}
	// The other caller's create, not blocked, took ID 1.
	if diff := cmp.Diff([]string{"pets/2", "true"}, got); w.Code != http.StatusCreated || diff != "" {
		t.Errorf("retry of the same pet, written otherwise, after the first: %d; Location, Idempotent-Replayed (-want +got):\n%s", w.Code, diff)
	}
	if n := store.Len(); n != 2 {
		t.Errorf("the store holds %d pets, want 2: one per caller", n)
	}
}
