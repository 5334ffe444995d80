package client_test

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/client"
	"github.com/petstore-go/petstore/httpapi"
)

// refuseFirst is a petstore.Limiter that refuses its first n requests,
// asking for wait, and then allows every one.
type refuseFirst struct {
	n    int64
	wait time.Duration
	seen atomic.Int64
}

func (l *refuseFirst) Allow(context.Context, string) (time.Duration, error) {
	if l.seen.Add(1) <= l.n {
		return l.wait, nil
	}
	return 0, nil
}

// TestRetryRateLimited: reads and creates retry a 429 after its
// Retry-After, a create storing one pet, and a client that gives up
// returns an *Error that carries the wait.
func TestRetryRateLimited(t *testing.T) {
	tests := []struct {
		name      string
		create    bool // Add rather than List
		refuse    int64
		wait      time.Duration
		opts      []client.Option
		wantWaits int
		wantErr   bool
	}{
		{name: "two 429s, then the page", refuse: 2, wait: 3 * time.Second, wantWaits: 2},
		{name: "two 429s, then the pet", create: true, refuse: 2, wait: time.Second, wantWaits: 2},
		{name: "retries exhausted", refuse: 10, wait: 2 * time.Second, opts: []client.Option{client.WithRetries(1)}, wantWaits: 1, wantErr: true},
		{name: "Retry-After over the longest wait", refuse: 10, wait: 20 * time.Second, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			limiter := &refuseFirst{n: tt.refuse, wait: tt.wait}
			limit := petstore.RateLimit{Reads: limiter}
			if tt.create {
				limit = petstore.RateLimit{Creates: limiter}
			}
			srv, store := newMemServer(t, petstore.WithRateLimit(limit))
			var w waits
			c := newClient(t, srv.base, append(tt.opts, w.option())...)
			var err error
			if tt.create {
				_, _, err = c.Add(t.Context(), petstore.NewPet{Name: "Rex", CategoryID: 1}, petstore.AddOptions{})
				if pets, _ := store.List(t.Context(), petstore.ListOptions{}); len(pets) != 1 || srv.count(http.MethodPost) != 3 {
					t.Errorf("%d pets stored by %d POSTs; want 1 by 3", len(pets), srv.count(http.MethodPost))
				}
			} else {
				_, err = c.List(t.Context(), petstore.ListOptions{})
			}
			checkRetryAfter(t, w.get(), tt.wantWaits, tt.wait)
			if !tt.wantErr {
				if err != nil {
					t.Fatalf("the call: %v", err)
				}
				return
			}
			var e *client.Error
			if !errors.As(err, &e) || e.Status != http.StatusTooManyRequests || e.Code != httpapi.CodeRateLimited || e.RetryAfter != tt.wait {
				t.Fatalf("List = %v (%+v); want an *Error of 429 rate_limited with RetryAfter %v", err, e, tt.wait)
			}
		})
	}
}

// TestBudget: against the real handler with a budget of two reads and one
// a second, the third read of a client that does not retry is answered
// 429, whose *Error carries the budget; a create, of another budget, is
// not refused meanwhile.
func TestBudget(t *testing.T) {
	srv, _ := newMemServer(t, petstore.WithRateLimit(petstore.RateLimit{
		Reads:   petstore.NewLimiter(petstore.Rate{PerSecond: 1, Burst: 2}, 0),
		Creates: petstore.NewLimiter(petstore.Rate{PerSecond: 1, Burst: 2}, 0),
	}))
	c := newClient(t, srv.base, client.WithRetries(0))
	ctx := t.Context()
	for i := range 2 {
		if _, err := c.List(ctx, petstore.ListOptions{Limit: 1}); err != nil {
			t.Fatalf("read %d of a burst of 2: %v", i+1, err)
		}
	}
	if _, _, err := c.Add(ctx, petstore.NewPet{Name: "Rex", CategoryID: 1}, petstore.AddOptions{}); err != nil {
		t.Fatalf("a create while the reads are spent: %v", err)
	}
	_, err := c.List(ctx, petstore.ListOptions{Limit: 1})
	var e *client.Error
	if !errors.As(err, &e) || e.Status != http.StatusTooManyRequests {
		t.Fatalf("the third read = %v; want a 429", err)
	}
	want := &client.Budget{Policy: "reads", Quota: 2, Window: 2 * time.Second, Remaining: 0, Reset: time.Second}
	if diff := cmp.Diff(want, e.Budget); diff != "" {
		t.Errorf("the 429's budget (-want +got):\n%s", diff)
	}
}
