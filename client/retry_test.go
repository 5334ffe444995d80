package client_test

import (
	"context"
	"errors"
	"io"
	"math"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/client"
	"github.com/petstore-go/petstore/httpapi"
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
			must(t, err)
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
}

// TestRetry checks that each method retries a 503 and a 429 after the
// wait that Retry-After asks for, and succeeds once the server answers, a
// create storing one pet; and when the client stops retrying: after the
// retries that WithRetries allows, at once when Retry-After asks for more
// than the longest wait, or when the context would end before the retry,
// and when the context ends during a wait. A client that gives up returns
// an *Error that holds the last answer and its wait.
func TestRetry(t *testing.T) {
	const refused = 0 // refuse every request
	tests := []struct {
		name      string
		status    int               // 503 from the store, or 429 from the rate limit
		method    faultstore.Method // the call
		refuse    int               // the requests refused before the store answers
		wait      time.Duration     // of Retry-After
		opts      []client.Option
		timeout   time.Duration // of the context; 0 for none
		cancel    bool          // the wait cancels the context
		wantWaits int
		wantErr   bool
	}{
		{name: "503, then the pet", status: 503, method: faultstore.Add, refuse: 2, wait: 3 * time.Second, wantWaits: 2},
		{name: "503, then the pet by ID", status: 503, method: faultstore.Get, refuse: 2, wait: 3 * time.Second, wantWaits: 2},
		{name: "503, then the page", status: 503, method: faultstore.List, refuse: 2, wait: 3 * time.Second, wantWaits: 2},
		{name: "429, then the page", status: 429, method: faultstore.List, refuse: 2, wait: 3 * time.Second, wantWaits: 2},
		{name: "429, then the pet", status: 429, method: faultstore.Add, refuse: 2, wait: time.Second, wantWaits: 2},
		{name: "503, no retries", status: 503, method: faultstore.Add, refuse: refused, wait: time.Second, opts: []client.Option{client.WithRetries(0)}, wantErr: true},
		{name: "503, retries exhausted", status: 503, method: faultstore.List, refuse: refused, wait: time.Second, opts: []client.Option{client.WithRetries(2)}, wantWaits: 2, wantErr: true},
		{name: "429, retries exhausted", status: 429, method: faultstore.List, refuse: refused, wait: 2 * time.Second, opts: []client.Option{client.WithRetries(1)}, wantWaits: 1, wantErr: true},
		{name: "503, Retry-After over the longest wait", status: 503, method: faultstore.List, refuse: refused, wait: time.Second,
			opts: []client.Option{client.WithBackoff(time.Millisecond, 999*time.Millisecond)}, wantErr: true},
		{name: "429, Retry-After over the longest wait", status: 429, method: faultstore.List, refuse: refused, wait: 20 * time.Second, wantErr: true},
		{name: "503, deadline before the retry", status: 503, method: faultstore.List, refuse: refused, wait: time.Second, timeout: 900 * time.Millisecond, wantErr: true},
		{name: "503, canceled during the wait", status: 503, method: faultstore.List, refuse: refused, wait: time.Second, cancel: true, wantWaits: 1, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mem := memstore.New()
			rex, _, err := mem.Add(t.Context(), petstore.NewPet{Name: "Rex", CategoryID: 1}, petstore.AddOptions{})
			must(t, err)
			var srv *server
			if tt.status == http.StatusServiceUnavailable {
				fs := faultstore.New(mem)
				fs.Set(tt.method, faultstore.Fault{Err: petstore.ErrUnavailable, Times: tt.refuse})
				srv = newServer(t, fs, petstore.WithRetryAfter(tt.wait))
			} else {
				limiter := &refuseFirst{n: int64(tt.refuse), wait: tt.wait}
				if tt.refuse == refused {
					limiter.n = math.MaxInt64
				}
				limit := petstore.RateLimit{Reads: limiter}
				if tt.method == faultstore.Add {
					limit = petstore.RateLimit{Creates: limiter}
				}
				srv = newServer(t, mem, petstore.WithRateLimit(limit))
			}
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
			c := newClient(t, srv.base, append(tt.opts, w.option())...)
			httpMethod := http.MethodGet
			switch tt.method {
			case faultstore.Add:
				httpMethod = http.MethodPost
				_, _, err = c.Add(ctx, petstore.NewPet{Name: "Tom", CategoryID: 1}, petstore.AddOptions{})
				if pets, _ := mem.List(t.Context(), petstore.ListOptions{}); len(pets) != 2 && err == nil {
					t.Errorf("%d pets stored; want the Add's besides Rex", len(pets))
				}
			case faultstore.Get:
				_, err = c.Get(ctx, rex.ID)
			case faultstore.List:
				_, err = c.List(ctx, petstore.ListOptions{})
			}
			checkRetryAfter(t, w.get(), tt.wantWaits, tt.wait)
			if n, want := srv.count(httpMethod), tt.wantWaits+1; n != want && !tt.cancel {
				t.Errorf("%d attempts; want %d", n, want)
			}
			if !tt.wantErr {
				must(t, err)
				return
			}
			var e *client.Error
			if !errors.As(err, &e) || e.Status != tt.status || e.RetryAfter != tt.wait {
				t.Errorf("%s = %v (%+v); want an *Error holding the %d answer, with RetryAfter %v", tt.method, err, e, tt.status, tt.wait)
			}
			if tt.status == http.StatusTooManyRequests && (e == nil || e.Code != httpapi.CodeRateLimited) {
				t.Errorf("%s = %v; want the code rate_limited", tt.method, err)
			}
			if tt.status == http.StatusServiceUnavailable && !errors.Is(err, petstore.ErrUnavailable) {
				t.Errorf("%s = %v; want an error wrapping ErrUnavailable", tt.method, err)
			}
			if tt.cancel && !errors.Is(err, context.Canceled) {
				t.Errorf("%s = %v; want an error wrapping context.Canceled", tt.method, err)
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
	must(t, err)
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
