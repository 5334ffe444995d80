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

// TestWaitForBudget: against the real handler with a budget of two reads
// and one a second, the third read of a client that does not retry is
// answered 429, whose *Error carries the budget; with WithWaitForBudget,
// the client waits before the third read instead, which then succeeds,
// and a create, of another budget, does not wait.
func TestWaitForBudget(t *testing.T) {
	for _, wait := range []bool{false, true} {
		t.Run(map[bool]string{false: "off", true: "on"}[wait], func(t *testing.T) {
			srv, _ := newMemServer(t, petstore.WithRateLimit(petstore.RateLimit{
				Reads:   petstore.NewLimiter(petstore.Rate{PerSecond: 1, Burst: 2}, 0),
				Creates: petstore.NewLimiter(petstore.Rate{PerSecond: 1, Burst: 2}, 0),
			}))
			s := waits{then: client.Sleep}
			opts := []client.Option{client.WithRetries(0), s.option()}
			if wait {
				opts = append(opts, client.WithWaitForBudget())
			}
			c := newClient(t, srv.base, opts...)
			ctx := t.Context()
			for i := range 2 {
				if _, err := c.List(ctx, petstore.ListOptions{Limit: 1}); err != nil {
					t.Fatalf("read %d of a burst of 2: %v", i+1, err)
				}
			}
			if _, _, err := c.Add(ctx, petstore.NewPet{Name: "Rex", CategoryID: 1}, petstore.AddOptions{}); err != nil {
				t.Fatalf("a create while the reads are spent: %v", err)
			}
			if got := s.get(); len(got) != 0 {
				t.Fatalf("waits before the third read: %v, want none", got)
			}
			_, err := c.List(ctx, petstore.ListOptions{Limit: 1})
			if !wait {
				var e *client.Error
				want := &client.Budget{Policy: "reads", Quota: 2, Window: 2 * time.Second, Remaining: 0, Reset: time.Second}
				if !errors.As(err, &e) || e.Status != http.StatusTooManyRequests {
					t.Fatalf("the third read = %v; want a 429", err)
				}
				if diff := cmp.Diff(want, e.Budget); diff != "" {
					t.Errorf("the 429's budget (-want +got):\n%s", diff)
				}
				return
			}
			if err != nil {
				t.Fatalf("the third read, after waiting for the budget: %v", err)
			}
			if got := s.get(); len(got) != 1 || got[0] <= 0 || got[0] > time.Second {
				t.Errorf("waits = %v; want one, up to the reset of 1 s", got)
			}
			if n := srv.count(http.MethodGet); n != 3 {
				t.Errorf("%d GETs reached the server; want 3, none refused", n)
			}
		})
	}
}

// TestWaitForBudgetBounds: a client that would wait for its budget past
// its context's deadline returns the context's error when the context
// ends, without sending the request; one whose budget comes back later
// than its longest wait between attempts (10 s) sends the request as if
// it did not wait for budgets.
func TestWaitForBudgetBounds(t *testing.T) {
	tests := []struct {
		name    string
		rate    float64
		wantErr error
		wantN   int
	}{
		{name: "the next read in 5 s", rate: 0.2, wantErr: context.DeadlineExceeded, wantN: 1},
		{name: "the next read in 100 s", rate: 0.01, wantErr: nil, wantN: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := newMemServer(t, petstore.WithRateLimit(petstore.RateLimit{
				Reads: petstore.NewLimiter(petstore.Rate{PerSecond: tt.rate, Burst: 1}, 0)}))
			c := newClient(t, srv.base, client.WithWaitForBudget())
			if _, err := c.Get(t.Context(), 1); !errors.Is(err, petstore.ErrNotFound) {
				t.Fatalf("the first read: %v; want not found", err)
			}
			ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
			defer cancel()
			_, err := c.Get(ctx, 1)
			var e *client.Error
			switch {
			case tt.wantErr != nil && !errors.Is(err, tt.wantErr):
				t.Errorf("the second read under a short deadline: %v; want %v", err, tt.wantErr)
			case tt.wantErr == nil && (!errors.As(err, &e) || e.Status != http.StatusTooManyRequests):
				t.Errorf("the second read under a short deadline: %v; want the server's 429", err)
			}
			if n := srv.count(http.MethodGet); n != tt.wantN {
				t.Errorf("%d GETs reached the server; want %d", n, tt.wantN)
			}
		})
	}
}
