package client_test

import (
	"cmp"
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/client"
	"github.com/petstore-go/petstore/memstore"
)

// The API keys of the test servers. A key "key-NAME" is accepted for every
// operation and authenticates the principal NAME; readOnlyKey may only list.
const (
	keyPrefix   = "key-"
	readOnlyKey = "read-only"
)

// authenticator accepts the keys described above.
var authenticator = petstore.AuthenticatorFunc(func(ctx context.Context, op petstore.Operation, token string) (context.Context, error) {
	switch {
	case token == readOnlyKey && op == petstore.OpListPets:
		return petstore.WithPrincipal(ctx, "reader"), nil
	case token == readOnlyKey:
		return nil, petstore.ErrForbidden
	case strings.HasPrefix(token, keyPrefix) && len(token) > len(keyPrefix):
		return petstore.WithPrincipal(ctx, strings.TrimPrefix(token, keyPrefix)), nil
	}
	return nil, petstore.ErrUnauthorized
})

// principalKey is the API key of the principal that ctx carries, "anon"
// when it carries none: it carries petstore.Principal over HTTP, so that
// the principal the server authenticates is the one the caller's context
// names.
func principalKey(ctx context.Context) string {
	return keyPrefix + cmp.Or(petstore.Principal(ctx), "anon")
}

// A server is the real handler on store behind an httptest.Server, counting
// the requests it answers.
type server struct {
	*httptest.Server
	base string // the API's base URL

	mu       sync.Mutex
	requests []*http.Request // clones of the requests, without bodies
}

// newServer starts the handler on store, with the options opts added to the
// store and the authenticator. The server closes when the test ends.
func newServer(t testing.TB, store petstore.Store, opts ...petstore.Option) *server {
	t.Helper()
	h, err := petstore.New(append([]petstore.Option{petstore.WithStore(store), petstore.WithAuthenticator(authenticator)}, opts...)...)
	must(t, err)
	s := &server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.requests = append(s.requests, r.Clone(context.Background()))
		s.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	s.base = s.URL + petstore.DefaultBasePath
	return s
}

// requestsOf returns clones of the requests with method that the server
// has answered, without their bodies.
func (s *server) requestsOf(method string) []*http.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.DeleteFunc(slices.Clone(s.requests), func(r *http.Request) bool { return r.Method != method })
}

// count returns how many requests with method the server has answered.
func (s *server) count(method string) int { return len(s.requestsOf(method)) }

// must fails t at once when err is not nil.
func must(t testing.TB, err error) {
	if err != nil {
		t.Helper()
		t.Fatal(err)
	}
}

// newClient returns a client of the server at base, which sends the key of
// the caller's principal (see principalKey) unless opts say otherwise.
func newClient(t testing.TB, base string, opts ...client.Option) *client.Client {
	t.Helper()
	c, err := client.New(base, append([]client.Option{client.WithAPIKeyFunc(principalKey)}, opts...)...)
	must(t, err)
	return c
}

// newMemServer starts the handler on a new memstore.
func newMemServer(t testing.TB, opts ...petstore.Option) (*server, *memstore.Store) {
	t.Helper()
	store := memstore.New()
	return newServer(t, store, opts...), store
}

// waits records the waits between attempts of a client, and then calls
// then, or, when then is nil, returns at once without waiting.
type waits struct {
	mu   sync.Mutex
	d    []time.Duration
	then func(ctx context.Context, d time.Duration) error
}

// option returns the option that makes a client record its waits here.
func (w *waits) option() client.Option {
	return client.WithSleep(func(ctx context.Context, d time.Duration) error {
		w.mu.Lock()
		w.d = append(w.d, d)
		w.mu.Unlock()
		if w.then != nil {
			return w.then(ctx, d)
		}
		return ctx.Err()
	})
}

// get returns the waits recorded so far.
func (w *waits) get() []time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]time.Duration(nil), w.d...)
}
