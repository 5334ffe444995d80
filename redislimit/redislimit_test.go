package redislimit_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/memstore"
	"github.com/petstore-go/petstore/redislimit"
	"github.com/petstore-go/petstore/redislimit/redistest"
	"github.com/redis/go-redis/v9"
)

// newRedis returns a client of a new redis-server.
func newRedis(t *testing.T) *redis.Client {
	t.Helper()
	opts, err := redis.ParseURL(redistest.Start(t))
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(opts)
	t.Cleanup(func() { rdb.Close() })
	return rdb
}

// TestAllow: a key gets its burst at once, then waits an interval for each
// request; another key, or another prefix, has a budget of its own; two
// Limiters on one Redis with the same prefix share the budget, as
// instances of a server do.
func TestAllow(t *testing.T) {
	rdb := newRedis(t)
	ctx := t.Context()
	rate := petstore.Rate{PerSecond: 1, Burst: 3} // waits of a second: far longer than the test's round trips
	a := redislimit.New(rdb, "reads:", rate)
	b := redislimit.New(rdb, "reads:", rate) // another instance
	other := redislimit.New(rdb, "creates:", rate)
	allow := func(l *redislimit.Limiter, key string) time.Duration {
		t.Helper()
		wait, err := l.Allow(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		return wait
	}
	for i, l := range []*redislimit.Limiter{a, b, a} {
		if wait := allow(l, "alice"); wait != 0 {
			t.Fatalf("request %d of the burst of 3: wait %v, want 0", i+1, wait)
		}
	}
	for _, l := range []*redislimit.Limiter{a, b} {
		if wait := allow(l, "alice"); wait <= 900*time.Millisecond || wait > time.Second {
			t.Errorf("past the burst: wait %v, want about the interval, 1 s", wait)
		}
	}
	if wait := allow(a, "bob"); wait != 0 {
		t.Errorf("another key: wait %v, want 0", wait)
	}
	if wait := allow(other, "alice"); wait != 0 {
		t.Errorf("another prefix: wait %v, want 0", wait)
	}
	// The key expires when its bucket is full again: Redis holds only
	// the callers that spent lately.
	ttl, err := rdb.PTTL(ctx, "reads:alice").Result()
	if err != nil {
		t.Fatal(err)
	}
	if ttl <= 0 || ttl > 3*time.Second {
		t.Errorf("the key's time to live is %v, want up to the burst's 3 s", ttl)
	}
}

// TestRefill: a spent budget comes back at the rate.
func TestRefill(t *testing.T) {
	l := redislimit.New(newRedis(t), "p:", petstore.Rate{PerSecond: 20, Burst: 1})
	ctx := t.Context()
	if wait, err := l.Allow(ctx, "k"); wait != 0 || err != nil {
		t.Fatalf("first: %v, %v", wait, err)
	}
	wait, err := l.Allow(ctx, "k")
	if err != nil || wait <= 0 || wait > 50*time.Millisecond {
		t.Fatalf("second at once: wait %v, %v; want up to the interval, 50 ms", wait, err)
	}
	time.Sleep(wait)
	if wait, err := l.Allow(ctx, "k"); wait != 0 || err != nil {
		t.Errorf("after the wait: %v, %v; want 0", wait, err)
	}
}

// TestRedisDown: a Limiter whose Redis is gone returns an error, which the
// handler answers 503, or lets the request through with FailOpen.
func TestRedisDown(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: time.Second})
	t.Cleanup(func() { rdb.Close() })
	l := redislimit.New(rdb, "p:", petstore.Rate{PerSecond: 1, Burst: 1})
	if _, err := l.Allow(t.Context(), "k"); err == nil {
		t.Fatal("Allow with Redis down: no error")
	}
	for _, tt := range []struct {
		failOpen bool
		want     int
	}{{false, http.StatusServiceUnavailable}, {true, http.StatusOK}} {
		h, err := petstore.New(petstore.WithStore(memstore.New()), petstore.WithAuthenticator(petstore.APIKeys("key-0123456789")),
			petstore.WithRateLimit(petstore.RateLimit{Reads: l, FailOpen: tt.failOpen}))
		if err != nil {
			t.Fatal(err)
		}
		r := httptest.NewRequest(http.MethodGet, "/v1/pets", nil)
		r.Header.Set("Authorization", "Bearer key-0123456789")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != tt.want {
			t.Errorf("FailOpen %v: status %d, want %d; body %s", tt.failOpen, w.Code, tt.want, w.Body)
		}
	}
}

// TestContext: Allow returns promptly, with the context's error, when its
// context is done.
func TestContext(t *testing.T) {
	l := redislimit.New(newRedis(t), "p:", petstore.Rate{PerSecond: 1, Burst: 1})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := l.Allow(ctx, "k"); !errors.Is(err, context.Canceled) {
		t.Errorf("Allow with a cancelled context = %v; want context.Canceled", err)
	}
}

func TestNewPanics(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "cannot work") {
			t.Errorf("New with a zero rate: panic %v; want one that says the rate cannot work", r)
		}
	}()
	redislimit.New(redis.NewClient(&redis.Options{}), "p:", petstore.Rate{})
}
