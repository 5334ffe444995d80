package petstore_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/memstore"
)

// TestNamedAPIKeysRotation: the old and the new key of one principal share
// idempotency keys, so a create retried across a rotation is replayed;
// another principal's equal Idempotency-Key is a key of its own.
func TestNamedAPIKeysRotation(t *testing.T) {
	auth := petstore.NamedAPIKeys(
		petstore.APIKey{Principal: "alice", Key: "alice-old"},
		petstore.APIKey{Principal: "alice", Key: "alice-new"},
		petstore.APIKey{Principal: "bob", Key: "bob-key"},
		petstore.APIKey{Key: "unnamed-key"},
	)
	h := newHandler(t, memstore.New(), petstore.WithAuthenticator(auth))
	type result struct {
		ID       int64
		Replayed string
	}
	var got []result
	for _, key := range []string{"alice-old", "alice-new", "bob-key", "unnamed-key", "alice-new"} {
		w := serve(h, newRequest(t, http.MethodPost, "/v1/pets", `{"name":"Rex","categoryId":1}`,
			http.Header{"Authorization": {"Bearer " + key}, "Idempotency-Key": {"retry-1"}}))
		checkResponse(t, w)
		if w.Code != http.StatusCreated {
			t.Fatalf("create with %s: status %d %s, want 201", key, w.Code, w.Body)
		}
		got = append(got, result{decode[petstore.Pet](t, w).ID, w.Header().Get("Idempotent-Replayed")})
	}
	want := []result{{1, ""}, {1, "true"}, {2, ""}, {3, ""}, {1, "true"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("creates with the same Idempotency-Key (-want +got):\n%s", diff)
	}
}

// TestNamedAPIKeysPrincipal: the store and Authenticate see the principal
// that the operator named, or the key's fingerprint when it names none.
func TestNamedAPIKeysPrincipal(t *testing.T) {
	auth := petstore.NamedAPIKeys(petstore.APIKey{Principal: "alice@example", Key: "k1"}, petstore.APIKey{Key: "k2"})
	tests := []struct{ key, want string }{
		{"k1", "alice@example"},
		{"k2", fingerprint("key", "k2")}, // as APIKeys names it
	}
	for _, tt := range tests {
		if got := petstore.Principal(mustAuthenticate(t, auth, tt.key)); got != tt.want {
			t.Errorf("Authenticate(%s): principal %q, want %q", tt.key, got, tt.want)
		}
		var seen string
		store := lastPrincipalStore{Store: memstore.New(), seen: &seen}
		h := newHandler(t, store, petstore.WithAuthenticator(auth))
		serve(h, newRequest(t, http.MethodGet, "/v1/pets", "", http.Header{"Authorization": {"Bearer " + tt.key}}))
		if seen != tt.want {
			t.Errorf("GET with %s: the store saw principal %q, want %q", tt.key, seen, tt.want)
		}
	}
}

// lastPrincipalStore records the principal of the last List.
type lastPrincipalStore struct {
	petstore.Store
	seen *string
}

var _ petstore.Store = lastPrincipalStore{}

func (s lastPrincipalStore) List(ctx context.Context, opts petstore.ListOptions) ([]petstore.Pet, error) {
	*s.seen = petstore.Principal(ctx)
	return s.Store.List(ctx, opts)
}

func mustAuthenticate(t *testing.T, a petstore.Authenticator, key string) context.Context {
	t.Helper()
	ctx, err := a.Authenticate(t.Context(), petstore.OpListPets, key)
	if err != nil {
		t.Fatalf("Authenticate(%s): %v", key, err)
	}
	return ctx
}
