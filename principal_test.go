package petstore_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/internal/testkit/faultstore"
	"github.com/petstore-go/petstore/memstore"
)

// anyToken accepts every token and names no principal, as the README's
// example once did.
var anyToken = petstore.AuthenticatorFunc(func(ctx context.Context, _ petstore.Operation, _ string) (context.Context, error) {
	return ctx, nil
})

// fingerprint is the principal that the handler gives a caller whose
// Authenticator names none, and, with kind "key", that APIKeys gives.
func fingerprint(kind, token string) string {
	d := sha256.Sum256([]byte(token))
	return kind + "-" + hex.EncodeToString(d[:8])
}

// principalStore is a memstore that records the principal of every call,
// and asks for Done in every other call, as pgx does. When the context holds
// a token (under tokenKey), it counts as bad a call whose principal is not
// the token's (its fingerprint, or "user-" and a token that begins with
// "named-"), or that adds a pet named after another token, and it keeps the
// context, as a store that writes an audit log after the call would, to
// read the principal again once the call has returned.
type principalStore struct {
	*memstore.Store
	mu   sync.Mutex
	seen []string
	bad  int
	kept sync.WaitGroup
}

var _ petstore.Store = (*principalStore)(nil)

func (s *principalStore) record(ctx context.Context, named string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.seen)%2 == 1 {
		_ = ctx.Done()
	}
	p := petstore.Principal(ctx)
	s.seen = append(s.seen, p)
	token, ok := ctx.Value(tokenKey{}).(string)
	if !ok {
		return
	}
	want := fingerprint("token", token)
	if strings.HasPrefix(token, "named-") {
		want = "user-" + token
	}
	if p != want || named != "" && named != token {
		s.bad++
	}
	kept := context.WithoutCancel(ctx)
	s.kept.Go(func() {
		defer func() {
			if recover() != nil {
				s.mu.Lock()
				s.bad++
				s.mu.Unlock()
			}
		}()
		time.Sleep(time.Millisecond) // the call has returned, and other calls have started
		if p := petstore.Principal(kept); p != want {
			s.mu.Lock()
			s.bad++
			s.mu.Unlock()
		}
	})
}

func (s *principalStore) Add(ctx context.Context, p petstore.NewPet, opts petstore.AddOptions) (petstore.Pet, bool, error) {
	s.record(ctx, p.Name)
	return s.Store.Add(ctx, p, opts)
}

func (s *principalStore) Get(ctx context.Context, id int64) (petstore.Pet, error) {
	s.record(ctx, "")
	return s.Store.Get(ctx, id)
}

func (s *principalStore) List(ctx context.Context, opts petstore.ListOptions) ([]petstore.Pet, error) {
	s.record(ctx, "")
	return s.Store.List(ctx, opts)
}

// TestIdempotencyKeysByPrincipal: idempotency keys are scoped by the
// caller's principal, a fingerprint of the token when the Authenticator sets
// none. Two callers sending the same key and body get two pets; the same
// caller twice, also with the old and the new key of a rotation named after
// one principal, gets one pet, replayed.
func TestIdempotencyKeysByPrincipal(t *testing.T) {
	byDefault := []string{"pets/1", "pets/2", "pets/1 true", "pets/2 true"}
	for _, tc := range []struct {
		name   string
		auth   petstore.Authenticator
		tokens []string
		want   []string // Location and Idempotent-Replayed
	}{
		{"no principal", anyToken, []string{"alice-token", "bob-token", "alice-token", "bob-token"}, byDefault},
		{"empty principal", petstore.AuthenticatorFunc(func(ctx context.Context, _ petstore.Operation, _ string) (context.Context, error) {
			return petstore.WithPrincipal(ctx, ""), nil
		}), []string{"alice-token", "bob-token", "alice-token", "bob-token"}, byDefault},
		{"nil context", petstore.AuthenticatorFunc(func(context.Context, petstore.Operation, string) (context.Context, error) {
			return nil, nil // an Authenticator may return no context
		}), []string{"alice-token", "bob-token", "alice-token", "bob-token"}, byDefault},
		{"NamedAPIKeys", petstore.NamedAPIKeys(
			petstore.APIKey{Principal: "alice", Key: "alice-old"},
			petstore.APIKey{Principal: "alice", Key: "alice-new"},
			petstore.APIKey{Principal: "bob", Key: "bob-key"},
			petstore.APIKey{Key: "unnamed-key"},
		), []string{"alice-old", "alice-new", "bob-key", "unnamed-key", "alice-new"}, []string{"pets/1", "pets/1 true", "pets/2", "pets/3", "pets/1 true"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := memstore.New()
			h := newHandler(t, store, petstore.WithAuthenticator(tc.auth))
			var got []string
			for _, token := range tc.tokens {
				w := serve(h, newRequest(t, http.MethodPost, "/v1/pets", `{"name":"Rex","categoryId":1}`,
					http.Header{"Idempotency-Key": {"k-1"}, "Authorization": {"Bearer " + token}}))
				if checkResponse(t, w); w.Code != http.StatusCreated {
					t.Fatalf("create with %s: %d %s, want 201", token, w.Code, w.Body)
				}
				got = append(got, strings.TrimSpace(w.Header().Get("Location")+" "+w.Header().Get("Idempotent-Replayed")))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Location and Idempotent-Replayed of %q (-want +got):\n%s", tc.tokens, diff)
			}
			if n, want := store.Len(), len(slices.DeleteFunc(slices.Clone(got), func(s string) bool { return strings.HasSuffix(s, "true") })); n != want {
				t.Errorf("the store holds %d pets, want %d: one per principal", n, want)
			}
		})
	}
}

// TestPrincipalSeen: every store call and every Observation carries the
// caller's principal: the one the Authenticator set (also in the context
// that Authenticate returns), APIKeys' fingerprint of the key, NamedAPIKeys'
// principal or else that fingerprint, or else the token's fingerprint, never
// "" and never the token; a context that no Authenticator returned carries
// none.
func TestPrincipalSeen(t *testing.T) {
	if p := petstore.Principal(t.Context()); p != "" {
		t.Errorf("Principal of a bare context = %q, want empty", p)
	}
	named := petstore.AuthenticatorFunc(func(ctx context.Context, _ petstore.Operation, token string) (context.Context, error) {
		return petstore.WithPrincipal(ctx, "user-"+strings.TrimSuffix(token, "-token")), nil
	})
	namedKeys := petstore.NamedAPIKeys(petstore.APIKey{Principal: "alice@example", Key: "k1"}, petstore.APIKey{Key: "k2"})
	for _, tc := range []struct {
		name  string
		auth  petstore.Authenticator
		token string
		want  string
	}{
		{"no principal", anyToken, "alice-token", fingerprint("token", "alice-token")},
		{"WithPrincipal", named, "alice-token", "user-alice"},
		{"APIKeys", petstore.APIKeys(testKey), testKey, fingerprint("key", testKey)},
		{"NamedAPIKeys", namedKeys, "k1", "alice@example"},
		{"NamedAPIKeys without a principal", namedKeys, "k2", fingerprint("key", "k2")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if ctx, err := tc.auth.Authenticate(t.Context(), petstore.OpListPets, tc.token); err != nil || tc.name != "no principal" && petstore.Principal(ctx) != tc.want {
				t.Errorf("Authenticate(%s) = %v; want the principal %q", tc.token, err, tc.want)
			}
			store := &principalStore{Store: seededStore(t)}
			var mu sync.Mutex
			var observed []string
			h := newHandler(t, store, petstore.WithAuthenticator(tc.auth), petstore.WithObserver(func(_ context.Context, o petstore.Observation) {
				mu.Lock()
				defer mu.Unlock()
				observed = append(observed, o.Principal)
			}))
			auth := http.Header{"Authorization": {"Bearer " + tc.token}}
			for _, r := range []*http.Request{
				newRequest(t, http.MethodGet, "/v1/pets?limit=2", "", auth),
				newRequest(t, http.MethodGet, "/v1/pets/1", "", auth),
				newRequest(t, http.MethodPost, "/v1/pets", `{"name":"Rex","categoryId":1}`, auth),
				newRequest(t, http.MethodPost, "/v1/pets", `{"name":"Rex","categoryId":1}`,
					http.Header{"Authorization": auth["Authorization"], "Idempotency-Key": {"k"}}),
			} {
				if w := serve(h, r); w.Code >= 300 {
					t.Fatalf("%s %s: %d %s", r.Method, r.URL, w.Code, w.Body)
				}
			}
			want := []string{tc.want, tc.want, tc.want, tc.want}
			if diff := cmp.Diff(want, store.seen); diff != "" {
				t.Errorf("Principal in the store's list, get, create and keyed create (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(want, observed); diff != "" {
				t.Errorf("Observation.Principal of the same requests (-want +got):\n%s", diff)
			}
		})
	}
}

// tokenKey is the context key under which tokenInContext puts the token,
// for principalStore to check against.
type tokenKey struct{}

// TestPrincipalConcurrent: under concurrent requests from many callers,
// each store call with a context of its own, every store call sees its own
// caller's principal, set by the Authenticator or not, whether or not the
// store asked for Done, and so does a context that the store kept and reads
// after the call has returned.
func TestPrincipalConcurrent(t *testing.T) {
	store := &principalStore{Store: memstore.New()}
	tokenInContext := petstore.AuthenticatorFunc(func(ctx context.Context, _ petstore.Operation, token string) (context.Context, error) {
		ctx = context.WithValue(ctx, tokenKey{}, token)
		if strings.HasPrefix(token, "named-") {
			ctx = petstore.WithPrincipal(ctx, "user-"+token)
		}
		return ctx, nil
	})
	h := newHandler(t, store, petstore.WithAuthenticator(tokenInContext))
	const callers, requests = 8, 200
	var wg sync.WaitGroup
	for c := range callers {
		token := fmt.Sprintf("caller-%d", c)
		if c%2 == 1 {
			token = "named-" + token
		}
		auth := http.Header{"Authorization": {"Bearer " + token}}
		wg.Go(func() {
			for i := range requests {
				r := newRequest(t, http.MethodGet, fmt.Sprint("/v1/pets/", 1+i%5), "", auth)
				switch i % 3 {
				case 0:
					r = newRequest(t, http.MethodPost, "/v1/pets", `{"name":"`+token+`","categoryId":1}`,
						http.Header{"Authorization": auth["Authorization"], "Idempotency-Key": {fmt.Sprint("k", i%10)}})
				case 1:
					r = newRequest(t, http.MethodGet, "/v1/pets?limit=1", "", auth)
				}
				if w := serve(h, r); w.Code >= 300 && w.Code != http.StatusNotFound {
					t.Errorf("%s %s by %s: %d %s", r.Method, r.URL, token, w.Code, w.Body)
					return
				}
			}
		})
	}
	wg.Wait()
	store.kept.Wait()
	if store.bad != 0 {
		t.Errorf("%d of %d store calls, or contexts kept after them, saw another caller's principal", store.bad, len(store.seen))
	}
	// Each caller sent its 10 keys (i%10 of every third request) many times, and stored one pet each.
	if n := store.Len(); n != callers*10 {
		t.Errorf("the store holds %d pets, want %d: one per caller and key", n, callers*10)
	}
}

// TestIdempotencyKeyInUse: while a create with a key runs, another with the
// same key from the same caller is answered 409 with Retry-After and does
// not reach the store; the same key from another caller is another key.
func TestIdempotencyKeyInUse(t *testing.T) {
	var held atomic.Bool // the first Add only
	store := newHeldStore(memstore.New(), func(m faultstore.Method, _ int64) bool {
		return m == faultstore.Add && held.CompareAndSwap(false, true)
	})
	h := newHandler(t, store, petstore.WithAuthenticator(petstore.APIKeys(testKey, "other-key")))
	keyed := func(apiKey string) http.Header {
		return http.Header{"Idempotency-Key": {"k-1"}, "Authorization": {"Bearer " + apiKey}}
	}
	first := make(chan int)
	go func() {
		first <- serve(h, newRequest(t, http.MethodPost, "/v1/pets", `{"name":"Rex","categoryId":1}`, keyed(testKey))).Code
	}()
	<-store.arrived
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
