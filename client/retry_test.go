package client_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/client"
	"github.com/petstore-go/petstore/internal/testkit/faultstore"
	"github.com/petstore-go/petstore/memstore"
)

// errLost is the transport error of an answer that loseFirst lost.
var errLost = errors.New("connection reset after the request was sent")

// loseFirst sends every request through http.DefaultTransport, but loses
// the answer to the first request with its method: it reads and discards
// the answer and returns errLost instead, as when a connection breaks after
// the server has answered.
type loseFirst struct {
	method string

	mu   sync.Mutex
	lost bool
}

func (l *loseFirst) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	lose := r.Method == l.method && !l.lost
	l.lost = l.lost || lose
	l.mu.Unlock()
	if lose {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return nil, errLost
	}
	return resp, nil
}

// TestAddLostAnswer checks that a create whose first answer is lost in
// transport is sent again with the same Idempotency-Key and creates exactly
// one pet.
func TestAddLostAnswer(t *testing.T) {
	p := petstore.NewPet{Name: "Rex", CategoryID: 1, Status: petstore.StatusAvailable}
	tests := []struct {
		name         string
		key          string // the caller's idempotency key
		wantReplayed bool
	}{
		// The key is the call's own: the pet is this call's, never a replay.
		{"key made by Add", "", false},
		// The server replays the pet stored by the lost attempt, and says so.
		{"key of the caller", "caller-key-1", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, store := newMemServer(t)
			var w waits
			c := newClient(t, srv.base, client.WithHTTPClient(&http.Client{Transport: &loseFirst{method: http.MethodPost}}), w.option())
			pet, replayed, err := c.Add(t.Context(), p, petstore.AddOptions{IdempotencyKey: tt.key})
			if err != nil {
				t.Fatalf("Add: %v", err)
			}
			stored, err := store.List(t.Context(), petstore.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]petstore.Pet{pet}, stored); diff != "" {
				t.Errorf("the store after one Add whose first answer was lost (-the pet Add returned +stored):\n%s", diff)
			}
			if replayed != tt.wantReplayed {
				t.Errorf("replayed = %v, want %v", replayed, tt.wantReplayed)
			}
			var keys []string
			for _, r := range srv.requestsOf(http.MethodPost) {
				keys = append(keys, r.Header.Get("Idempotency-Key"))
			}
			if len(keys) != 2 || keys[0] == "" || keys[0] != keys[1] || tt.key != "" && keys[0] != tt.key {
				t.Errorf("the POSTs carried the Idempotency-Keys %q; want two, both %q or both the same key made by Add", keys, tt.key)
			}
			if got := w.get(); len(got) != 1 || got[0] < client.DefaultMinBackoff/2 || got[0] > client.DefaultMinBackoff {
				t.Errorf("waits = %v; want one of %v to %v", got, client.DefaultMinBackoff/2, client.DefaultMinBackoff)
			}
		})
	}

	t.Run("without retries", func(t *testing.T) {
		srv, _ := newMemServer(t)
		c := newClient(t, srv.base, client.WithHTTPClient(&http.Client{Transport: &loseFirst{method: http.MethodPost}}), client.WithRetries(0))
		_, _, err := c.Add(t.Context(), p, petstore.AddOptions{})
		if !errors.Is(err, petstore.ErrUnavailable) || !errors.Is(err, errLost) {
			t.Errorf("Add = %v; want an error wrapping ErrUnavailable and the transport's error", err)
		}
		if n := srv.count(http.MethodPost); n != 1 {
			t.Errorf("%d POSTs; want 1", n)
		}
	})
}

// TestRetryUnavailable checks that each method retries a 503 after the wait
// that Retry-After asks for, and succeeds once the store heals.
func TestRetryUnavailable(t *testing.T) {
	calls := map[faultstore.Method]func(c *client.Client, ctx context.Context, id int64) error{
		faultstore.Add: func(c *client.Client, ctx context.Context, _ int64) error {
			_, _, err := c.Add(ctx, petstore.NewPet{Name: "Tom", CategoryID: 1}, petstore.AddOptions{})
			return err
		},
		faultstore.Get: func(c *client.Client, ctx context.Context, id int64) error {
			_, err := c.Get(ctx, id)
			return err
		},
		faultstore.List: func(c *client.Client, ctx context.Context, _ int64) error {
			_, err := c.List(ctx, petstore.ListOptions{})
			return err
		},
	}
	for method, call := range calls {
		t.Run(string(method), func(t *testing.T) {
			mem := memstore.New()
			rex, _, err := mem.Add(t.Context(), petstore.NewPet{Name: "Rex", CategoryID: 1}, petstore.AddOptions{})
			if err != nil {
				t.Fatal(err)
			}
			fs := faultstore.New(mem)
			fs.Set(method, faultstore.Fault{Err: petstore.ErrUnavailable, Times: 2})
			srv := newServer(t, fs, petstore.WithRetryAfter(3*time.Second))
			var w waits
			c := newClient(t, srv.base, w.option())
			if err := call(c, t.Context(), rex.ID); err != nil {
				t.Fatalf("%s through two 503s: %v", method, err)
			}
			checkRetryAfter(t, w.get(), 2, 3*time.Second)
			if n := fs.Calls(method); n != 3 {
				t.Errorf("%d calls of the store's %s; want 3", n, method)
			}
		})
	}
}

// TestRetryLimits checks when the client stops retrying a 503: after the
// retries that WithRetries allows, at once when Retry-After asks for more
// than the longest wait, or when the context would end before the retry,
// and when the context ends during a wait.
func TestRetryLimits(t *testing.T) {
	fs := faultstore.New(memstore.New())
	fs.Set(faultstore.List, faultstore.Fault{Err: petstore.ErrUnavailable})
	srv := newServer(t, fs) // Retry-After: 1

	tests := []struct {
		name      string
		opts      []client.Option
		timeout   time.Duration // of the context; 0 for none
		cancel    bool          // the wait cancels the context
		wantWaits int           // each after Retry-After, 1 s
		wantCtx   error         // wrapped besides ErrUnavailable
	}{
		{name: "retries exhausted", opts: []client.Option{client.WithRetries(2)}, wantWaits: 2},
		{name: "Retry-After over the longest wait", opts: []client.Option{client.WithBackoff(time.Millisecond, 999*time.Millisecond)}},
		{name: "deadline before the retry", timeout: 900 * time.Millisecond},
		{name: "canceled during the wait", cancel: true, wantWaits: 1, wantCtx: context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			if tt.timeout > 0 {
				ctx, cancel = context.WithTimeout(ctx, tt.timeout)
				defer cancel()
			}
			var w waits
			if tt.cancel {
				w.then = func(context.Context, time.Duration) error { cancel(); return ctx.Err() }
			}
			before := fs.Calls(faultstore.List)
			c := newClient(t, srv.base, append(tt.opts, w.option())...)
			_, err := c.List(ctx, petstore.ListOptions{})
			if !errors.Is(err, petstore.ErrUnavailable) {
				t.Errorf("List = %v; want an error wrapping ErrUnavailable", err)
			}
			if tt.wantCtx != nil && !errors.Is(err, tt.wantCtx) {
				t.Errorf("List = %v; want an error wrapping %v", err, tt.wantCtx)
			}
			var e *client.Error
			if !errors.As(err, &e) || e.Status != http.StatusServiceUnavailable {
				t.Errorf("List = %v; want an error holding the 503 answer", err)
			}
			checkRetryAfter(t, w.get(), tt.wantWaits, time.Second)
			if n, want := fs.Calls(faultstore.List)-before, tt.wantWaits+1; n != want && !tt.cancel {
				t.Errorf("%d attempts; want %d", n, want)
			}
		})
	}
}

// failing is a transport that always fails with errDown.
type failing struct{}

var errDown = errors.New("connection refused")

func (failing) RoundTrip(*http.Request) (*http.Response, error) { return nil, errDown }

// TestBackoff checks the waits between attempts that failed in transport:
// each drawn between half and all of a doubling wait, capped.
func TestBackoff(t *testing.T) {
	var w waits
	c, err := client.New("http://127.0.0.1:1/v1", client.WithAPIKey("k"), client.WithHTTPClient(&http.Client{Transport: failing{}}),
		client.WithRetries(6), client.WithBackoff(100*time.Millisecond, time.Second), w.option())
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Get(t.Context(), 1)
	if !errors.Is(err, petstore.ErrUnavailable) || !errors.Is(err, errDown) {
		t.Errorf("Get = %v; want an error wrapping ErrUnavailable and the transport's error", err)
	}
	caps := []time.Duration{100, 200, 400, 800, 1000, 1000}
	got := w.get()
	if len(got) != len(caps) {
		t.Fatalf("waits = %v; want %d", got, len(caps))
	}
	for i, d := range got {
		hi := caps[i] * time.Millisecond
		if d < hi/2 || d > hi {
			t.Errorf("wait %d = %v; want %v to %v", i+1, d, hi/2, hi)
		}
	}
}

// checkRetryAfter checks that there were n waits, each of retryAfter plus
// at most half as much again.
func checkRetryAfter(t *testing.T, waits []time.Duration, n int, retryAfter time.Duration) {
	t.Helper()
	if len(waits) != n {
		t.Errorf("waits = %v; want %d", waits, n)
	}
	for i, d := range waits {
		if d < retryAfter || d > retryAfter*3/2 {
			t.Errorf("wait %d = %v; want %v to %v, after Retry-After", i+1, d, retryAfter, retryAfter*3/2)
		}
	}
}
