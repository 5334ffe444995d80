package petstore_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/httpapi"
	"github.com/petstore-go/petstore/internal/testkit/faultstore"
	"github.com/petstore-go/petstore/memstore"
)

// newClockedLimiter returns a MemoryLimiter of r whose clock reads *now,
// which the test moves.
func newClockedLimiter(r petstore.Rate, now *time.Time) *petstore.MemoryLimiter {
	l := petstore.NewLimiter(r, 0)
	petstore.SetLimiterClock(l, func() time.Time { return *now })
	return l
}

func TestMemoryLimiter(t *testing.T) {
	ctx := context.Background()
	now := time.Unix(1_800_000_000, 0)
	l := newClockedLimiter(petstore.Rate{PerSecond: 2, Burst: 3}, &now)
	const ms = time.Millisecond
	type step struct {
		advance time.Duration
		key     string
		want    petstore.Budget
	}
	steps := []step{
		// A burst of 3, each leaving one fewer and the next one an
		// interval (500 ms) away; then the 4th waits one interval.
		{0, "a", petstore.Budget{Remaining: 2, Reset: 500 * ms}}, {0, "a", petstore.Budget{Remaining: 1, Reset: 500 * ms}},
		{0, "a", petstore.Budget{Remaining: 0, Reset: 500 * ms}}, {0, "a", petstore.Budget{Wait: 500 * ms, Reset: 500 * ms}},
		// Another key has a budget of its own.
		{0, "b", petstore.Budget{Remaining: 2, Reset: 500 * ms}},
		// A refused request spends nothing: after 200 ms, 300 ms are left.
		{200 * ms, "a", petstore.Budget{Wait: 300 * ms, Reset: 300 * ms}},
		{300 * ms, "a", petstore.Budget{Remaining: 0, Reset: 500 * ms}}, {0, "a", petstore.Budget{Wait: 500 * ms, Reset: 500 * ms}},
		// A request comes back an interval after it was spent.
		{700 * ms, "a", petstore.Budget{Remaining: 0, Reset: 300 * ms}},
		// An idle key fills up to its burst, no more.
		{time.Hour, "a", petstore.Budget{Remaining: 2, Reset: 500 * ms}}, {0, "a", petstore.Budget{Remaining: 1, Reset: 500 * ms}},
		{0, "a", petstore.Budget{Remaining: 0, Reset: 500 * ms}}, {0, "a", petstore.Budget{Wait: 500 * ms, Reset: 500 * ms}},
	}
	var got, want []petstore.Budget
	for _, s := range steps {
		now = now.Add(s.advance)
		b, err := l.Spend(ctx, s.key)
		if err != nil {
			t.Fatal(err)
		}
		got, want = append(got, b), append(want, s.want)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("budgets (-want +got):\n%s", diff)
	}
	if wait, err := l.Allow(ctx, "a"); wait != 500*ms || err != nil {
		t.Errorf("Allow over the budget = %v, %v; want Spend's wait, 500ms", wait, err)
	}
}

// TestMemoryLimiterBound sees a million principals once each: the limiter
// keeps at most maxKeys of them, and its memory stays under the bound that
// its doc states, 100 bytes a key.
func TestMemoryLimiterBound(t *testing.T) {
	const maxKeys = 100_000
	const bound = 100 * maxKeys // bytes
	ctx := context.Background()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	l := petstore.NewLimiter(petstore.Rate{PerSecond: 1, Burst: 1}, maxKeys)
	for i := range 1_000_000 {
		if _, err := l.Allow(ctx, "principal-"+strconv.Itoa(i)); err != nil {
			t.Fatal(err)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	used := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("a million principals: %d keys kept, %d bytes (%.1f a key kept)", petstore.LimiterLen(l), used, float64(used)/float64(petstore.LimiterLen(l)))
	if petstore.LimiterLen(l) > maxKeys {
		t.Errorf("%d keys kept, want at most %d", petstore.LimiterLen(l), maxKeys)
	}
	if used > bound {
		t.Errorf("%d bytes held, want at most %d", used, bound)
	}
	runtime.KeepAlive(l)
}

// limiterFunc is a Limiter made of a function.
type limiterFunc func(ctx context.Context, key string) (time.Duration, error)

func (f limiterFunc) Allow(ctx context.Context, key string) (time.Duration, error) {
	return f(ctx, key)
}

// waits is a Limiter that answers every request with d and err.
func waits(d time.Duration, err error) limiterFunc {
	return func(context.Context, string) (time.Duration, error) { return d, err }
}

// TestRateLimit: a request over its budget is answered 429 rate_limited
// with Retry-After, the limiter's wait rounded up to whole seconds, and a
// create over it stores nothing; reads and creates have budgets of their
// own; a limiter that fails gives 503, or lets requests through with
// FailOpen. Every answer of a budget kept by a BudgetLimiter carries
// RateLimit-Policy and RateLimit, each budget under its own name; a 429
// carries r=0 and a t no later than its Retry-After; a Limiter that is only
// a Limiter, or one that failed, gives no such fields.
func TestRateLimit(t *testing.T) {
	errDown := errors.New("limiter backend down")
	type request struct{ method, target, body string }
	get := request{http.MethodGet, "/v1/pets/1", ""}
	list := request{http.MethodGet, "/v1/pets?limit=1", ""}
	missing := request{http.MethodGet, "/v1/pets/999", ""}
	create := request{http.MethodPost, "/v1/pets", `{"name":"Rex","categoryId":1}`}
	type answer struct {
		Status                        int
		RetryAfter, Policy, RateLimit string
	}
	now := time.Unix(1_800_000_000, 0)
	clocked := func(r petstore.Rate) *petstore.MemoryLimiter { return newClockedLimiter(r, &now) }
	defaults := func() petstore.RateLimit { // cmd/petstore's default budgets
		return petstore.RateLimit{Reads: clocked(petstore.Rate{PerSecond: 200, Burst: 400}), Creates: clocked(petstore.Rate{PerSecond: 50, Burst: 100})}
	}
	fail := waits(0, errDown)
	cases := []struct {
		name     string
		limit    petstore.RateLimit
		requests []request
		advance  time.Duration // before the last request
		want     []answer
		stored   int // pets added
	}{{
		name:     "the default budgets: reads and creates under policies of their own",
		limit:    defaults(),
		requests: []request{get, list, create, missing},
		want: []answer{
			{200, "", `"reads";q=400;w=2`, `"reads";r=399;t=1`},
			{200, "", `"reads";q=400;w=2`, `"reads";r=398;t=1`},
			{201, "", `"creates";q=100;w=2`, `"creates";r=99;t=1`},
			{404, "", `"reads";q=400;w=2`, `"reads";r=397;t=1`},
		},
		stored: 1,
	}, {
		name:     "reads over their budget get 429; creates have a budget of their own",
		limit:    petstore.RateLimit{Reads: clocked(petstore.Rate{PerSecond: 0.5, Burst: 2})},
		requests: []request{get, get, get, create, create, create},
		want: []answer{
			{200, "", `"reads";q=2;w=4`, `"reads";r=1;t=2`}, {200, "", `"reads";q=2;w=4`, `"reads";r=0;t=2`}, {429, "2", `"reads";q=2;w=4`, `"reads";r=0;t=2`},
			{Status: 201}, {Status: 201}, {Status: 201},
		},
		stored: 3,
	}, {
		name:     "a 429 has r=0 and t no later than Retry-After",
		limit:    petstore.RateLimit{Reads: clocked(petstore.Rate{PerSecond: 0.4, Burst: 2})}, // a request every 2.5 s
		requests: []request{get, get, get, get},
		advance:  time.Second,
		want: []answer{
			{200, "", `"reads";q=2;w=5`, `"reads";r=1;t=3`},
			{200, "", `"reads";q=2;w=5`, `"reads";r=0;t=3`},
			{429, "3", `"reads";q=2;w=5`, `"reads";r=0;t=3`},
			{429, "2", `"reads";q=2;w=5`, `"reads";r=0;t=2`},
		},
	}, {
		name:     "a create over its budget stores nothing",
		limit:    petstore.RateLimit{Creates: clocked(petstore.Rate{PerSecond: 1, Burst: 1})},
		requests: []request{create, create, create, get},
		want: []answer{
			{201, "", `"creates";q=1;w=1`, `"creates";r=0;t=1`}, {429, "1", `"creates";q=1;w=1`, `"creates";r=0;t=1`},
			{429, "1", `"creates";q=1;w=1`, `"creates";r=0;t=1`}, {Status: 200},
		},
		stored: 1,
	}, {
		name:     "Retry-After is the wait of a Limiter that is not a BudgetLimiter, rounded up to whole seconds",
		limit:    petstore.RateLimit{Reads: waits(2500*time.Millisecond, nil)},
		requests: []request{get},
		want:     []answer{{Status: 429, RetryAfter: "3"}},
	}, {
		name:     "a wait under a second is one second",
		limit:    petstore.RateLimit{Reads: waits(time.Millisecond, nil)},
		requests: []request{get},
		want:     []answer{{Status: 429, RetryAfter: "1"}},
	}, {
		name:     "a Limiter that is not a BudgetLimiter",
		limit:    petstore.RateLimit{Reads: waits(0, nil)},
		requests: []request{get},
		want:     []answer{{Status: 200}},
	}, {
		name:     "a limiter that fails gives 503",
		limit:    petstore.RateLimit{Reads: fail, Creates: fail},
		requests: []request{get, create},
		want:     []answer{{Status: 503, RetryAfter: "1"}, {Status: 503, RetryAfter: "1"}},
	}, {
		name:     "a limiter that fails lets requests through with FailOpen",
		limit:    petstore.RateLimit{Reads: fail, Creates: fail, FailOpen: true},
		requests: []request{get, create},
		want:     []answer{{Status: 200}, {Status: 201}},
		stored:   1,
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, petstore.WithRateLimit(c.limit))
			before := e.store.Len()
			var got []answer
			for i, r := range c.requests {
				if i == len(c.requests)-1 {
					now = now.Add(c.advance)
				}
				w := e.serve(newRequest(t, r.method, r.target, r.body, nil))
				if code := checkResponse(t, w); w.Code == http.StatusTooManyRequests && code != httpapi.CodeRateLimited {
					t.Errorf("request %d: code %q, want %q", i, code, httpapi.CodeRateLimited)
				}
				got = append(got, answer{w.Code, w.Header().Get("Retry-After"), w.Header().Get("RateLimit-Policy"), w.Header().Get("RateLimit")})
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("answers (-want +got):\n%s", diff)
			}
			if got := e.store.Len() - before; got != c.stored {
				t.Errorf("%d pets stored, want %d", got, c.stored)
			}
		})
	}
}

// TestRateLimitByPrincipal: a caller over its budget leaves another's
// alone, and requests without a valid key, or for the public document,
// spend no budget.
func TestRateLimitByPrincipal(t *testing.T) {
	const otherKey = "other-key-0123456789"
	var keys []string
	limiter := limiterFunc(func(_ context.Context, key string) (time.Duration, error) {
		keys = append(keys, key)
		if key == petstore.Principal(context.Background()) {
			t.Error("the limiter was called with no principal")
		}
		if len(keys) > 1 && key == keys[0] {
			return time.Second, nil
		}
		return 0, nil
	})
	h := newHandler(t, seededStore(t), petstore.WithAuthenticator(petstore.APIKeys(testKey, otherKey)),
		petstore.WithRateLimit(petstore.RateLimit{Reads: limiter}))
	statuses := []int{
		serve(h, newRequest(t, http.MethodGet, "/v1/pets", "", nil)).Code,
		serve(h, newRequest(t, http.MethodGet, "/v1/pets", "", nil)).Code,
		serve(h, newRequest(t, http.MethodGet, "/v1/pets", "", http.Header{"Authorization": {"Bearer " + otherKey}})).Code,
		serve(h, newRequest(t, http.MethodGet, "/v1/pets", "", http.Header{"Authorization": {"Bearer wrong"}})).Code,
		serve(h, newRequest(t, http.MethodGet, "/v1/openapi.json", "", http.Header{"Authorization": nil})).Code,
	}
	if diff := cmp.Diff([]int{200, 429, 200, 401, 200}, statuses); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
	if len(keys) != 3 || keys[0] != keys[1] || keys[0] == keys[2] {
		t.Errorf("the limiter saw the keys %q; want one principal twice, then another", keys)
	}
}

// TestRateLimitHeadersFlood floods the default read budget on the real
// clock: every answer carries both fields, r counts down, and each 429
// carries r=0 and a t no later than its Retry-After.
func TestRateLimitHeadersFlood(t *testing.T) {
	h := newHandler(t, seededStore(t), petstore.WithRateLimit(petstore.RateLimit{
		Reads: petstore.NewLimiter(petstore.Rate{PerSecond: 200, Burst: 400}, 0)}))
	limited := 0
	for i := range 500 {
		w := serve(h, newRequest(t, http.MethodGet, "/v1/pets/1", "", nil))
		policy, state := w.Header().Get("RateLimit-Policy"), w.Header().Get("RateLimit")
		var r, reset int64
		if _, err := fmt.Sscanf(state, `"reads";r=%d;t=%d`, &r, &reset); err != nil || policy != `"reads";q=400;w=2` {
			t.Fatalf("request %d: RateLimit-Policy %q, RateLimit %q; want \"reads\";q=400;w=2 and \"reads\";r=N;t=N", i, policy, state)
		}
		if w.Code != http.StatusTooManyRequests {
			continue
		}
		limited++
		retryAfter, err := strconv.ParseInt(w.Header().Get("Retry-After"), 10, 64)
		if err != nil || r != 0 || reset < 1 || reset > retryAfter {
			t.Errorf("request %d, a 429: RateLimit %q, Retry-After %q; want r=0 and 1 <= t <= Retry-After", i, state, w.Header().Get("Retry-After"))
		}
	}
	if limited == 0 {
		t.Error("500 reads at once met no 429 of a budget of 400")
	}
}

func TestNewLimiterPanics(t *testing.T) {
	for _, r := range []petstore.Rate{{PerSecond: 0, Burst: 1}, {PerSecond: 1, Burst: 0}, {PerSecond: -1, Burst: 5}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("NewLimiter(%+v, 0) did not panic", r)
				}
			}()
			petstore.NewLimiter(r, 0)
		}()
	}
}

// Each caller gets a budget of requests: here a burst of two reads, then
// one every 10 seconds. The third read at once is answered 429 with the
// wait in Retry-After.
func ExampleWithRateLimit() {
	h, err := petstore.New(
		petstore.WithStore(memstore.New()),
		petstore.WithAuthenticator(petstore.APIKeys("secret-key")),
		petstore.WithRateLimit(petstore.RateLimit{
			Reads: petstore.NewLimiter(petstore.Rate{PerSecond: 0.1, Burst: 2}, 0),
		}),
	)
	if err != nil {
		log.Fatal(err)
	}
	for range 3 {
		r := httptest.NewRequest("GET", "/v1/pets", nil)
		r.Header.Set("Authorization", "Bearer secret-key")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		fmt.Printf("%d Retry-After: %q\n", w.Code, w.Header().Get("Retry-After"))
	}
	// Output:
	// 200 Retry-After: ""
	// 200 Retry-After: ""
	// 429 Retry-After: "10"
}

// heldGetOf1 holds the calls of Get of pet 1.
func heldGetOf1(m faultstore.Method, id int64) bool { return m == faultstore.Get && id == 1 }

// TestMaxInFlight: a caller with MaxInFlight requests in flight is answered
// 429 rate_limited with Retry-After, no sooner than half of RateLimit.Pause,
// observed as such by operation, and a
// create of it stores nothing; another caller is served meanwhile, and the
// first is served again once its requests end.
func TestMaxInFlight(t *testing.T) {
	const otherKey, pause = "other-key-0123456789", 200 * time.Millisecond
	store := newHeldStore(seededStore(t), heldGetOf1)
	var mu sync.Mutex
	var limited []string // the observed 429s
	h := newHandler(t, store, petstore.WithAuthenticator(petstore.APIKeys(testKey, otherKey)),
		petstore.WithRetryAfter(3*time.Second),
		petstore.WithRateLimit(petstore.RateLimit{MaxInFlight: 2, Pause: pause}),
		petstore.WithObserver(func(_ context.Context, o petstore.Observation) {
			mu.Lock()
			defer mu.Unlock()
			if o.Code == httpapi.CodeRateLimited {
				limited = append(limited, fmt.Sprint(o.Operation, " ", o.Status, " ", o.Principal != ""))
			}
		}))
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			if w := serve(h, newRequest(t, http.MethodGet, "/v1/pets/1", "", nil)); w.Code != http.StatusOK {
				t.Errorf("a request within the bound: status %d, body %s", w.Code, w.Body)
			}
		})
		<-store.arrived
	}
	before := store.Len()
	for _, r := range []*http.Request{
		newRequest(t, http.MethodGet, "/v1/pets?limit=1", "", nil),
		newRequest(t, http.MethodPost, "/v1/pets", `{"name":"Rex","categoryId":1}`, nil),
	} {
		start := time.Now()
		w := serve(h, r)
		if took := time.Since(start); took < pause/2 {
			t.Errorf("%s %s over the bound was answered after %v; want at least half the pause, %v", r.Method, r.URL, took, pause/2)
		}
		if code := checkResponse(t, w); w.Code != http.StatusTooManyRequests || code != httpapi.CodeRateLimited ||
			w.Header().Get("Retry-After") != "3" || w.Header().Get("Connection") != "" {
			t.Errorf("%s %s over the bound: status %d, code %q, Retry-After %q, Connection %q; want 429 %s, 3, and the connection kept",
				r.Method, r.URL, w.Code, code, w.Header().Get("Retry-After"), w.Header().Get("Connection"), httpapi.CodeRateLimited)
		}
	}
	if got := store.Len(); got != before {
		t.Errorf("the create over the bound stored %d pets", got-before)
	}
	other := http.Header{"Authorization": {"Bearer " + otherKey}}
	if w := serve(h, newRequest(t, http.MethodGet, "/v1/pets/2", "", other)); w.Code != http.StatusOK {
		t.Errorf("another caller: status %d, want 200; body %s", w.Code, w.Body)
	}
	close(store.release)
	wg.Wait()
	if w := serve(h, newRequest(t, http.MethodGet, "/v1/pets/2", "", nil)); w.Code != http.StatusOK {
		t.Errorf("the first caller after its requests ended: status %d, want 200; body %s", w.Code, w.Body)
	}

	mu.Lock()
	defer mu.Unlock()
	if diff := cmp.Diff([]string{"listPets 429 true", "createPet 429 true"}, limited); diff != "" {
		t.Errorf("the observed 429s (-want +got):\n%s", diff)
	}
}

// TestRateLimitPause: with RateLimit.Pause, a 429 over the budget is
// answered no sooner than half the pause (TestMaxInFlight checks one over
// MaxInFlight), and at once when the request ends first; a request within
// its budget is not held.
func TestRateLimitPause(t *testing.T) {
	const pause = 200 * time.Millisecond
	h := newHandler(t, seededStore(t), petstore.WithRateLimit(petstore.RateLimit{
		Creates: petstore.NewLimiter(petstore.Rate{PerSecond: 0.001, Burst: 1}, 0), Pause: pause}))
	const pet = `{"name":"Rex","categoryId":1}`
	if w := serve(h, newRequest(t, http.MethodPost, "/v1/pets", pet, nil)); w.Code != http.StatusCreated {
		t.Fatalf("a create within the budget: status %d, body %s", w.Code, w.Body)
	}
	start := time.Now()
	if w := serve(h, newRequest(t, http.MethodPost, "/v1/pets", pet, nil)); w.Code != http.StatusTooManyRequests {
		t.Fatalf("a create over the budget: status %d, body %s", w.Code, w.Body)
	}
	if took := time.Since(start); took < pause/2 {
		t.Errorf("a create over the budget was answered after %v; want at least half the pause, %v", took, pause/2)
	}

	held := newHandler(t, memstore.New(), petstore.WithRateLimit(petstore.RateLimit{
		Creates: petstore.NewLimiter(petstore.Rate{PerSecond: 0.001, Burst: 1}, 0), Pause: time.Hour}))
	serve(held, newRequest(t, http.MethodPost, "/v1/pets", pet, nil))
	ctx, cancel := context.WithCancel(context.Background())
	answered := make(chan *httptest.ResponseRecorder)
	go func() {
		answered <- serve(held, newRequestContext(t, ctx, http.MethodPost, "/v1/pets", pet, nil))
	}()
	cancel()
	if w := <-answered; w.Code != http.StatusTooManyRequests {
		t.Errorf("a create over the budget whose request ended during an hour's pause: status %d, want 429", w.Code)
	}

}
