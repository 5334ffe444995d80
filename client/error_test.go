package client_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/client"
	"github.com/petstore-go/petstore/httpapi"
	"github.com/petstore-go/petstore/internal/testkit/faultstore"
	"github.com/petstore-go/petstore/memstore"
)

// sentinels are the library's errors that an error answer may wrap.
var sentinels = []error{
	petstore.ErrNotFound, petstore.ErrUnauthorized, petstore.ErrForbidden, petstore.ErrUnavailable,
	petstore.ErrInvalidPet, petstore.ErrIdempotencyKeyInUse, petstore.ErrIdempotencyKeyReused,
}

// gate is a Store whose Add waits, once it has been called, until the gate
// opens.
type gate struct {
	*memstore.Store
	entered chan struct{} // closed by the first Add
	open    chan struct{} // closed by the test
}

var _ petstore.Store = (*gate)(nil)

func (g *gate) Add(ctx context.Context, p petstore.NewPet, opts petstore.AddOptions) (petstore.Pet, bool, error) {
	select {
	case <-g.entered:
	default:
		close(g.entered)
	}
	<-g.open
	return g.Store.Add(ctx, p, opts)
}

// TestErrors checks, for every error answer, the sentinel that the error
// wraps, the *Error it holds, and how many times the request was sent: 503
// and a create's 409 are retried, no other answer is.
func TestErrors(t *testing.T) {
	const retries = 2
	rex := petstore.NewPet{Name: "Rex", CategoryID: 1}
	add := func(c *client.Client, key string, p petstore.NewPet) error {
		_, _, err := c.Add(context.Background(), p, petstore.AddOptions{IdempotencyKey: key})
		return err
	}
	get := func(_ *testing.T, c *client.Client) error { _, err := c.Get(context.Background(), 42); return err }
	list := func(opts petstore.ListOptions) func(*testing.T, *client.Client) error {
		return func(_ *testing.T, c *client.Client) error { _, err := c.List(context.Background(), opts); return err }
	}
	addRex := func(_ *testing.T, c *client.Client) error { return add(c, "", rex) }
	failing := func(m faultstore.Method, err error) petstore.Store {
		fs := faultstore.New(memstore.New())
		fs.Set(m, faultstore.Fault{Err: err})
		return fs
	}
	g := &gate{Store: memstore.New(), entered: make(chan struct{}), open: make(chan struct{})}
	tests := []struct {
		name         string
		store        petstore.Store // nil for a new memstore
		proxy        bool           // a proxy answers 502 instead of the handler
		key          client.Option  // nil for the principal's key
		call         func(t *testing.T, c *client.Client) error
		want         error // the sentinel; nil for none
		wantStatus   int
		wantCode     httpapi.Code
		wantRequests int
		wantFields   []httpapi.FieldError
	}{
		{name: "404 for an unknown pet", call: get, want: petstore.ErrNotFound, wantStatus: 404, wantCode: httpapi.CodeNotFound, wantRequests: 1},
		{name: "401 without a key", key: client.WithAPIKeyFunc(func(context.Context) string { return "" }), call: list(petstore.ListOptions{}),
			want: petstore.ErrUnauthorized, wantStatus: 401, wantCode: httpapi.CodeUnauthorized, wantRequests: 1},
		{name: "401 for a wrong key", key: client.WithAPIKey("wrong"), call: addRex, want: petstore.ErrUnauthorized, wantStatus: 401, wantCode: httpapi.CodeUnauthorized, wantRequests: 1},
		{name: "403 for a key that may not create", key: client.WithAPIKey(readOnlyKey), call: addRex, want: petstore.ErrForbidden, wantStatus: 403, wantCode: httpapi.CodeForbidden, wantRequests: 1},
		// The Error lists each mistake, as the server did.
		{name: "400 invalid_body", call: func(_ *testing.T, c *client.Client) error {
			return add(c, "", petstore.NewPet{Name: " ", CategoryID: 0, Status: "lost"})
		}, want: petstore.ErrInvalidPet, wantStatus: 400, wantCode: httpapi.CodeInvalidBody, wantRequests: 1, wantFields: []httpapi.FieldError{
			{Pointer: "/name", Detail: "name must not be blank"},
			{Pointer: "/categoryId", Detail: "categoryId must be 1 or greater"},
			{Pointer: "/status", Detail: `status must be "available", "pending" or "sold"; omit it for none`},
		}},
		{name: "400 invalid_parameter", call: list(petstore.ListOptions{Status: "lost"}),
			wantStatus: 400, wantCode: httpapi.CodeInvalidParameter, wantRequests: 1,
			wantFields: []httpapi.FieldError{{Parameter: "status", Detail: `status must be "available", "pending" or "sold"`}}},
		// The requests are the first create's and the reused key's.
		{name: "422 for a key reused for another pet", call: func(t *testing.T, c *client.Client) error {
			must(t, add(c, "k", rex))
			return add(c, "k", petstore.NewPet{Name: "Tom", CategoryID: 1})
		}, want: petstore.ErrIdempotencyKeyReused, wantStatus: 422, wantCode: httpapi.CodeIdempotencyKeyReused, wantRequests: 2},
		// The requests are the first create's, and the attempts of the second.
		{name: "409 while the same create runs", store: g, call: func(t *testing.T, c *client.Client) error {
			first := make(chan error)
			go func() { first <- add(c, "k", rex) }()
			<-g.entered
			err := add(c, "k", rex)
			close(g.open)
			if err := <-first; err != nil {
				t.Errorf("the first create: %v", err)
			}
			return err
		}, want: petstore.ErrIdempotencyKeyInUse, wantStatus: 409, wantCode: httpapi.CodeIdempotencyKeyInUse, wantRequests: 2 + retries},
		{name: "500 for a failing store", store: failing(faultstore.Get, errors.New("disk on fire")), call: get, wantStatus: 500, wantCode: httpapi.CodeInternal, wantRequests: 1},
		{name: "503 for an unavailable store", store: failing(faultstore.Add, petstore.ErrUnavailable), call: addRex,
			want: petstore.ErrUnavailable, wantStatus: 503, wantCode: httpapi.CodeUnavailable, wantRequests: 1 + retries},
		{name: "502 from a proxy, without the API's body", proxy: true, call: get, wantStatus: 502, wantRequests: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var w waits
			opts := []client.Option{client.WithRetries(retries), w.option()}
			if tt.key != nil {
				opts = append(opts, tt.key)
			}
			var err error
			var requests int
			if tt.proxy {
				srv, n := hostile(t, answer(http.StatusBadGateway, "<html>bad gateway</html>"))
				err = tt.call(t, newClient(t, srv.URL, opts...))
				requests = int(n.Load())
			} else {
				if tt.store == nil {
					tt.store = memstore.New()
				}
				srv := newServer(t, tt.store)
				err = tt.call(t, newClient(t, srv.base, opts...))
				requests = srv.count(http.MethodGet) + srv.count(http.MethodPost)
			}
			if err == nil {
				t.Fatal("no error")
			}
			t.Logf("error: %v", err)
			for _, s := range sentinels {
				if got, want := errors.Is(err, s), s == tt.want; got != want {
					t.Errorf("errors.Is(err, %v) = %v, want %v", s, got, want)
				}
			}
			var e *client.Error
			if !errors.As(err, &e) {
				t.Fatalf("errors.As(err, *client.Error) = false")
			}
			if diff := cmp.Diff(client.Error{Status: tt.wantStatus, Code: tt.wantCode}, client.Error{Status: e.Status, Code: e.Code}); diff != "" {
				t.Errorf("the *client.Error's status and code (-want +got):\n%s", diff)
			}
			if e.Message == "" {
				t.Error("the *client.Error has no message")
			}
			if diff := cmp.Diff(tt.wantFields, e.Fields); diff != "" {
				t.Errorf("Fields (-want +got):\n%s", diff)
			}
			if requests != tt.wantRequests {
				t.Errorf("the call sent %d requests; want %d", requests, tt.wantRequests)
			}
		})
	}
}

// TestUnsent checks the calls that the client refuses without sending a
// request: one with a done context, with an error wrapping the context's
// error; an Add of a name that JSON cannot carry; and a negative Limit.
func TestUnsent(t *testing.T) {
	srv, _ := newMemServer(t)
	c := newClient(t, srv.base)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, _, err := c.Add(ctx, petstore.NewPet{Name: "Rex", CategoryID: 1}, petstore.AddOptions{})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Add = %v; want an error wrapping context.Canceled", err)
	}
	for p, err := range c.All(ctx, petstore.ListOptions{}) {
		if !errors.Is(err, context.Canceled) {
			t.Errorf("All yielded %+v, %v; want an error wrapping context.Canceled", p, err)
		}
	}
	_, _, err = c.Add(t.Context(), petstore.NewPet{Name: "Rex\xff", CategoryID: 1}, petstore.AddOptions{})
	if !errors.Is(err, petstore.ErrInvalidPet) || !strings.Contains(err.Error(), "UTF-8") {
		t.Errorf("Add = %v; want an error about UTF-8 wrapping ErrInvalidPet", err)
	}
	_, err = c.List(t.Context(), petstore.ListOptions{Limit: -1})
	if err == nil || !strings.Contains(err.Error(), "use 0 for every pet") {
		t.Errorf("List(Limit -1) = %v; want an error that says to use 0", err)
	}
	if n := srv.count(http.MethodGet) + srv.count(http.MethodPost); n != 0 {
		t.Errorf("%d requests sent; want none", n)
	}
}
