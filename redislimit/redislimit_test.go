package redislimit_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
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

// limitedHandler returns a function that serves a request to /v1/pets,
// with method, body and a key the handler accepts, by a handler on a
// memstore with the budgets limit.
func limitedHandler(t *testing.T, limit petstore.RateLimit) func(method, body string) *httptest.ResponseRecorder {
	t.Helper()
	h, err := petstore.New(petstore.WithStore(memstore.New()), petstore.WithAuthenticator(petstore.APIKeys("key-0123456789")),
		petstore.WithRateLimit(limit))
	if err != nil {
		t.Fatal(err)
	}
	return func(method, body string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(method, "/v1/pets", strings.NewReader(body))
		r.Header.Set("Authorization", "Bearer key-0123456789")
		if body != "" {
			r.Header.Set("Content-Type", "application/json")
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
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
	if left, err := a.Spend(ctx, "carol"); err != nil || left != (petstore.Budget{Remaining: 2, Reset: time.Second}) {
		t.Errorf("Spend of a new key = %+v, %v; want 2 remaining and the next in 1 s", left, err)
	}
	if left, err := b.Spend(ctx, "alice"); err != nil || left.Remaining != 0 || left.Wait <= 0 || left.Reset != left.Wait {
		t.Errorf("Spend past the burst = %+v, %v; want 0 remaining and Reset equal to Wait", left, err)
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

// TestHeaders: with the server's default budgets in Redis, a read and a
// create carry RateLimit-Policy and RateLimit under policies of their own,
// counted by Redis; in a flood, each 429 carries r=0 and a t no later than
// its Retry-After.
func TestHeaders(t *testing.T) {
	rdb := newRedis(t)
	serve := limitedHandler(t, petstore.RateLimit{
		Reads:   redislimit.New(rdb, "reads:", petstore.Rate{PerSecond: 200, Burst: 400}),
		Creates: redislimit.New(rdb, "creates:", petstore.Rate{PerSecond: 50, Burst: 100}),
	})
	type fields struct {
		Status            int
		Policy, RateLimit string
	}
	var got []fields
	for _, w := range []*httptest.ResponseRecorder{serve(http.MethodGet, ""), serve(http.MethodPost, `{"name":"Rex","categoryId":1}`)} {
		got = append(got, fields{w.Code, w.Header().Get("RateLimit-Policy"), w.Header().Get("RateLimit")})
	}
	want := []fields{{200, `"reads";q=400;w=2`, `"reads";r=399;t=1`}, {201, `"creates";q=100;w=2`, `"creates";r=99;t=1`}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("a read and a create (-want +got):\n%s", diff)
	}
	limited := 0
	for i := range 500 {
		w := serve(http.MethodGet, "")
		if w.Code != http.StatusTooManyRequests {
			continue
		}
		limited++
		var r, reset int64
		_, err := fmt.Sscanf(w.Header().Get("RateLimit"), `"reads";r=%d;t=%d`, &r, &reset)
		retryAfter, err2 := strconv.ParseInt(w.Header().Get("Retry-After"), 10, 64)
		if err != nil || err2 != nil || r != 0 || reset < 1 || reset > retryAfter {
			t.Fatalf("request %d, a 429: RateLimit %q, Retry-After %q; want r=0 and 1 <= t <= Retry-After",
				i, w.Header().Get("RateLimit"), w.Header().Get("Retry-After"))
		}
	}
	if limited == 0 {
		t.Error("500 reads at once met no 429 of a budget of 400")
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
		w := limitedHandler(t, petstore.RateLimit{Reads: l, FailOpen: tt.failOpen})(http.MethodGet, "")
		if w.Code != tt.want {
			t.Errorf("FailOpen %v: status %d, want %d; body %s", tt.failOpen, w.Code, tt.want, w.Body)
		}
	}
}

// TestStalledRedis: a Redis that stalls (DEBUG SLEEP 5) makes a request
// answer 503 once the limiter's one deadline of 1 s has passed, rather
// than when go-redis's retries of its read timeout (three, by default)
// give up or Redis wakes. The limiter's client is NewClient's, with the
// options that cmd/petstore gives it: timeouts of 1 s and go-redis's
// default pool.
func TestStalledRedis(t *testing.T) {
	opts, err := redis.ParseURL(redistest.Start(t, "--enable-debug-command", "local"))
	if err != nil {
		t.Fatal(err)
	}
	newClient := func(set func(*redis.Options)) *redis.Client {
		o := *opts
		set(&o)
		rdb := redis.NewClient(&o)
		t.Cleanup(func() { rdb.Close() })
		return rdb
	}
	o := *opts
	o.DialTimeout, o.ReadTimeout, o.WriteTimeout = time.Second, time.Second, time.Second
	rdb := redislimit.NewClient(&o)
	t.Cleanup(func() { rdb.Close() })
	serve := limitedHandler(t, petstore.RateLimit{Reads: redislimit.New(rdb, "p:", petstore.Rate{PerSecond: 100, Burst: 100})})
	get := func() (int, time.Duration) {
		start := time.Now()
		return serve(http.MethodGet, "").Code, time.Since(start)
	}
	if code, _ := get(); code != http.StatusOK {
		t.Fatalf("with Redis up: status %d, want 200", code)
	}

	// Stall Redis once, and wait until it no longer answers.
	stall := newClient(func(o *redis.Options) { o.MaxRetries, o.ReadTimeout = -1, 10*time.Second })
	go stall.Do(context.Background(), "DEBUG", "SLEEP", "5")
	probe := newClient(func(o *redis.Options) { o.MaxRetries, o.ReadTimeout = -1, 100*time.Millisecond })
	for deadline := time.Now().Add(10 * time.Second); probe.Ping(t.Context()).Err() == nil; {
		if time.Now().After(deadline) {
			t.Fatal("Redis still answers 10 s after DEBUG SLEEP 5 was sent")
		}
		time.Sleep(10 * time.Millisecond)
	}

	// Twice as many requests at once as the pool has connections: those
	// that wait for one wait within the same deadline.
	n := 2 * rdb.Options().PoolSize
	codes, times := make([]int, n), make([]time.Duration, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { codes[i], times[i] = get() })
	}
	wg.Wait()
	t.Logf("%d requests with Redis stalled: statuses %v, the slowest answered after %v", n, slices.Compact(slices.Sorted(slices.Values(codes))), slices.Max(times))
	for i := range n {
		if codes[i] != http.StatusServiceUnavailable || times[i] > 2500*time.Millisecond {
			t.Fatalf("with Redis stalled: status %d after %v, want 503 after about the limiter's deadline, 1 s", codes[i], times[i])
		}
	}
	short := redislimit.New(rdb, "p:", petstore.Rate{PerSecond: 100, Burst: 100}, redislimit.WithTimeout(200*time.Millisecond))
	start := time.Now()
	if _, err := short.Allow(t.Context(), "k"); err == nil || time.Since(start) > 900*time.Millisecond {
		t.Errorf("Allow with a deadline of 200 ms, Redis stalled: %v after %v; want an error after about 200 ms", err, time.Since(start))
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
