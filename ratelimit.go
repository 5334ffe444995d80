package petstore

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/petstore-go/petstore/httpapi"
)

// A Limiter keeps a budget of requests for each key and spends from it (see
// WithRateLimit). The handler calls it with the caller's principal as the
// key, once for every operation it serves to an authenticated caller.
//
// Allow spends one request from key's budget and returns 0, or, when the
// budget is empty, spends nothing and returns how long until it holds one:
// the handler answers 429 with that wait in Retry-After. An error means the
// Limiter could not decide (its backend is down); the handler answers 503,
// unless RateLimit.FailOpen is set. Allow must be safe for concurrent use
// and must return promptly when ctx is done.
type Limiter interface {
	Allow(ctx context.Context, key string) (wait time.Duration, err error)
}

// A BudgetLimiter is a Limiter that also tells what is left of the budget,
// for the RateLimit-Policy and RateLimit header fields that the handler
// then sends on every answer of the budget (see WithRateLimit).
//
// Spend decides as Allow does, with the same wait in Budget.Wait, and
// tells what is left of key's budget; the handler calls it instead of
// Allow, so a wrapper that overrides one must override both. Rate returns
// the budget that the Limiter keeps for each key.
type BudgetLimiter interface {
	Limiter
	Spend(ctx context.Context, key string) (Budget, error)
	Rate() Rate
}

// A Budget is what a BudgetLimiter's Spend tells of a key's budget.
type Budget struct {
	// Wait is Allow's: 0 when the request was spent, and otherwise how
	// long until the budget holds one, with nothing spent.
	Wait time.Duration
	// Remaining is the number of requests that the budget holds now,
	// after this one: 0 when it refused this one.
	Remaining int
	// Reset is how long until the budget holds one request more than
	// Remaining (Wait when it refused this one), or 0 when it is full.
	Reset time.Duration
}

// budgetOf returns what a GCRA bucket holds whose time ahead of now is
// ahead (after the request, or as it stands when refused), with wait the
// request's: the requests it holds, and the time until it holds one more.
func budgetOf(ahead, interval, window, wait time.Duration) Budget {
	left := max((window-ahead)/interval, 0)
	return Budget{Wait: wait, Remaining: int(left), Reset: max(ahead+(left+1)*interval-window, 0)}
}

// A Rate is a budget: Burst requests at once, refilled at PerSecond
// requests a second, as a token bucket of Burst tokens.
type Rate struct {
	PerSecond float64
	Burst     int
}

// Interval returns the time one request of the budget takes to come back:
// a second divided by PerSecond.
func (r Rate) Interval() time.Duration {
	return time.Duration(math.Ceil(float64(time.Second) / r.PerSecond))
}

// RateLimit sets the budgets of WithRateLimit.
type RateLimit struct {
	// Reads is the budget of listPets and getPet, by principal; nil sets none.
	Reads Limiter
	// Creates is the budget of createPet, by principal; nil sets none.
	Creates Limiter
	// MaxInFlight is the most requests that one principal may have in
	// flight at once, over all its connections (watch streams aside: Watch
	// caps them). One more is answered 429 rate_limited with the
	// Retry-After of WithRetryAfter, and never reaches the store. 0 sets no
	// bound. A host that bounds its connections or the bodies it reads at
	// once sets it to a share of that bound (a quarter, say).
	MaxInFlight int
	// Pause holds each 429 of a caller over its budget or MaxInFlight for
	// a random time between half and one and a half times Pause (or until
	// the request ends), so that a flood on many connections costs one
	// cheap answer per connection per Pause. A held request keeps its
	// place in MaxInFlight meanwhile. 0 answers at once.
	Pause time.Duration
	// FailOpen serves a request when its Limiter fails. By default the
	// handler answers it 503 with Retry-After, as when the store fails.
	FailOpen bool
}

// WithRateLimit gives each caller a budget of requests, kept by its
// principal (see Principal): one for reads (listPets and getPet) and one
// for creates (createPet). A request over its budget is answered 429
// rate_limited with Retry-After, the whole seconds until the budget has a
// request again, rounded up; a create answered 429 never reaches the store.
// The budget is checked after authentication, so a caller without a valid
// credential spends none, and the OpenAPI document and the docs page have
// none. By default there is no limit.
//
// NewLimiter keeps the budgets in the process; several instances behind one
// balancer share them through another Limiter (package redislimit keeps
// them in Redis), so that a caller's budget does not grow with the
// instances.
//
// Size a budget from what a well-behaved client does, not from what the
// server can take: a burst that covers the largest batch a client sends at
// once (a page walk, a retry storm) and a rate a few times its sustained
// rate, such as Reads: NewLimiter(Rate{PerSecond: 100, Burst: 200}, 0) and
// Creates: NewLimiter(Rate{PerSecond: 20, Burst: 40}, 0).
//
// With a BudgetLimiter (NewLimiter's and redislimit's are), every answer
// of a budget, 429 included, carries the RateLimit-Policy and RateLimit
// header fields of the IETF draft "RateLimit header fields for HTTP", with
// the policies "reads" and "creates", as in `RateLimit: "reads";r=12;t=1`:
// r is the requests the budget holds now and t the whole seconds until it
// holds one more (docs/limits.md gives both fields in full). A 429 carries
// r=0 and a t equal to its Retry-After.
func WithRateLimit(l RateLimit) Option {
	return optionFunc(func(c *config) error {
		if l.Pause < 0 {
			return fmt.Errorf("WithRateLimit: Pause %v is negative; use 0 to answer at once", l.Pause)
		}
		if l.MaxInFlight < 0 {
			return fmt.Errorf("WithRateLimit: MaxInFlight %d is negative; use 0 for no bound", l.MaxInFlight)
		}
		c.rateLimit = l
		return nil
	})
}

// seconds returns d in whole seconds, rounded up.
func seconds(d time.Duration) int64 { return int64((d + time.Second - 1) / time.Second) }

// errLimiter wraps the error of a Limiter that failed.
var errLimiter = errors.New("rate limiter failed")

// rateLimits are the handler's budgets, as New found them.
type rateLimits struct {
	reads, creates budget
	failOpen       bool
	pause          time.Duration
}

// A budget is a Limiter of the handler, with what it needs to describe it
// on the answers of its requests when it is a BudgetLimiter.
type budget struct {
	Limiter
	spend  BudgetLimiter // the Limiter, when it is one
	name   string        // the policy's name in the header fields
	policy []string      // the value of RateLimit-Policy, shared
}

func newRateLimits(l RateLimit) rateLimits {
	return rateLimits{reads: newBudget(l.Reads, "reads"), creates: newBudget(l.Creates, "creates"), failOpen: l.FailOpen, pause: l.Pause}
}

func newBudget(l Limiter, name string) budget {
	b := budget{Limiter: l, name: name}
	if bl, ok := l.(BudgetLimiter); ok {
		r := bl.Rate()
		w := max(seconds(r.Interval()*time.Duration(r.Burst)), 1)
		b.spend, b.policy = bl, []string{`"` + name + `";q=` + strconv.Itoa(r.Burst) + ";w=" + strconv.FormatInt(w, 10)}
	}
	return b
}

// limit spends one request of the caller's budget for op, and describes
// the budget in w's header when its Limiter can. It returns nil when the
// request may go on, the 429 when it may not, and an error that the
// handler answers 503 when the Limiter failed and FailOpen is not set.
func (h *handler) limit(ctx context.Context, w http.ResponseWriter, op Operation) error {
	b := &h.rateLimit.reads
	if op == OpCreatePet {
		b = &h.rateLimit.creates
	}
	if b.Limiter == nil {
		return nil
	}
	var left Budget
	var err error
	if b.spend == nil {
		left.Wait, err = b.Allow(ctx, Principal(ctx))
	} else if left, err = b.spend.Spend(ctx, Principal(ctx)); err == nil {
		hdr := w.Header()
		hdr["Ratelimit-Policy"] = b.policy
		hdr["Ratelimit"] = []string{`"` + b.name + `";r=` + strconv.Itoa(left.Remaining) + ";t=" + strconv.FormatInt(seconds(left.Reset), 10)}
	}
	switch {
	case err != nil && h.rateLimit.failOpen:
		return nil
	case err != nil:
		return fmt.Errorf("%w: %w: %w", ErrUnavailable, errLimiter, err)
	case left.Wait > 0:
		secs := strconv.FormatInt(max(seconds(left.Wait), 1), 10)
		return &requestError{code: httpapi.CodeRateLimited, header: "Retry-After", value: []string{secs},
			message: "too many requests for this API key; retry after " + secs + " s"}
	}
	return nil
}

// wait holds a request answered 429 for RateLimit.Pause, spread at random
// over half to one and a half times it, or until ctx ends.
func (l *rateLimits) wait(ctx context.Context) {
	if l.pause <= 0 {
		return
	}
	t := time.NewTimer(l.pause/2 + rand.N(l.pause))
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// inFlight counts what each key has in flight, up to max: the requests of
// each principal, for RateLimit.MaxInFlight, and the creates of each
// principal's idempotency key, one at a time. It holds only keys with
// something in flight, so its size is bounded by the requests served at
// once.
type inFlight struct {
	max  int
	full error // the answer to a request over max, shared

	mu   sync.Mutex
	busy map[string]int
}

func newInFlight(max int, retryAfter []string) *inFlight {
	if max == 0 {
		return nil
	}
	return &inFlight{max: max, busy: map[string]int{},
		full: &requestError{code: httpapi.CodeRateLimited, header: "Retry-After", value: retryAfter,
			message: "this API key has " + strconv.Itoa(max) + " requests in flight, the most it may; wait for an answer before sending another"}}
}

// take counts a request of key in flight, or returns the error to answer
// when key has max already. done must follow a nil error.
func (f *inFlight) take(key string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.busy[key] >= f.max {
		return f.full
	}
	f.busy[key]++
	return nil
}

func (f *inFlight) done(key string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.busy[key]--; f.busy[key] == 0 {
		delete(f.busy, key)
	}
}

// A MemoryLimiter is a BudgetLimiter that keeps each key's budget in the
// process, with the generic cell rate algorithm (GCRA). It is safe for
// concurrent use and spends no allocation on a key it keeps.
//
// It keeps at most maxKeys keys, each by a 64-bit hash of the key, in under
// 100 bytes: under 10 MB for DefaultLimiterKeys. When it is full, it first
// forgets the keys whose buckets are full again, which loses nothing, and
// then, if it must, keys at random, which gives those keys a full bucket
// early: a host with more callers busy at once than maxKeys raises it.
type MemoryLimiter struct {
	rate     Rate
	interval time.Duration // the time one request takes to come back
	window   time.Duration // interval × burst: how far ahead a bucket may run
	maxKeys  int
	seed     maphash.Seed
	now      func() time.Time

	mu   sync.Mutex
	full map[uint64]int64 // key hash → Unix nanoseconds at which its bucket is full
}

// NewLimiter returns a MemoryLimiter with the budget r for each key, which
// keeps at most maxKeys keys (DefaultLimiterKeys when maxKeys is 0). It
// panics when r cannot work (see Rate) or maxKeys is negative, as a
// programming mistake.
func NewLimiter(r Rate, maxKeys int) *MemoryLimiter {
	if !(r.PerSecond > 0) || math.IsInf(r.PerSecond, 1) || r.Burst < 1 {
		panic(fmt.Errorf("NewLimiter: the rate %v a second with a burst of %d cannot work; use a positive rate and a burst of 1 or more, such as {PerSecond: 50, Burst: 100}",
			r.PerSecond, r.Burst))
	}
	if maxKeys < 0 {
		panic(fmt.Sprintf("NewLimiter: maxKeys %d is negative; use 0 for %d", maxKeys, DefaultLimiterKeys))
	}
	if maxKeys == 0 {
		maxKeys = DefaultLimiterKeys
	}
	interval := r.Interval()
	return &MemoryLimiter{rate: r, interval: interval, window: interval * time.Duration(r.Burst),
		maxKeys: maxKeys, seed: maphash.MakeSeed(), now: time.Now, full: make(map[uint64]int64)}
}

// Allow spends one request of key's budget (see Limiter). It never fails.
func (l *MemoryLimiter) Allow(ctx context.Context, key string) (time.Duration, error) {
	b, err := l.Spend(ctx, key)
	return b.Wait, err
}

// Spend spends one request of key's budget and tells what is left of it
// (see BudgetLimiter). It never fails.
func (l *MemoryLimiter) Spend(_ context.Context, key string) (Budget, error) {
	h := maphash.String(l.seed, key)
	now := l.now().UnixNano()
	l.mu.Lock()
	defer l.mu.Unlock()
	full, ok := l.full[h]
	if !ok && len(l.full) >= l.maxKeys {
		l.evict(now)
	}
	full = max(full, now)
	if ahead := time.Duration(full-now) + l.interval; ahead > l.window {
		return budgetOf(ahead-l.interval, l.interval, l.window, ahead-l.window), nil
	}
	l.full[h] = full + int64(l.interval)
	return budgetOf(time.Duration(full-now)+l.interval, l.interval, l.window, 0), nil
}

// Rate returns the budget of each key (see BudgetLimiter).
func (l *MemoryLimiter) Rate() Rate { return l.rate }

// evict makes room for keys in a full table: it forgets the keys whose
// buckets are full by now and then, while the table holds more than seven
// eighths of maxKeys, keys at random, so that a stream of new keys pays
// for a sweep only once in maxKeys/8 keys.
func (l *MemoryLimiter) evict(now int64) {
	for h, full := range l.full {
		if full <= now {
			delete(l.full, h)
		}
	}
	for h := range l.full {
		if len(l.full) <= l.maxKeys-l.maxKeys/8-1 {
			break
		}
		delete(l.full, h)
	}
}
