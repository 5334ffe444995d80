package petstore

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/petstore-go/petstore/httpapi"
)

// A Limiter keeps a budget of requests for each key and spends from it (see
// WithRateLimit). The handler calls it with the caller's principal as the
// key, once for every operation it serves to an authenticated caller.
//
// Allow spends one request from key's budget. It returns 0 when the budget
// held one, and otherwise how long until it holds one again, without
// spending: the handler answers 429 with that wait, rounded up to whole
// seconds, in Retry-After. An error means the Limiter could not decide (its
// backend is down); the handler answers 503, unless RateLimit.FailOpen is
// set. Allow must be safe for concurrent use and must return promptly when
// ctx is done.
type Limiter interface {
	Allow(ctx context.Context, key string) (wait time.Duration, err error)
}

// A Rate is a budget: Burst requests at once, refilled at PerSecond
// requests a second, as a token bucket of Burst tokens.
type Rate struct {
	PerSecond float64
	Burst     int
}

// check reports a Rate that cannot work, for the option named by where.
func (r Rate) check(where string) error {
	if !(r.PerSecond > 0) || math.IsInf(r.PerSecond, 1) || r.Burst < 1 {
		return fmt.Errorf("%s: the rate %v a second with a burst of %d cannot work; use a positive rate and a burst of 1 or more, such as {PerSecond: 50, Burst: 100}",
			where, r.PerSecond, r.Burst)
	}
	return nil
}

// Interval returns the time one request of the budget takes to come back:
// a second divided by PerSecond.
func (r Rate) Interval() time.Duration {
	return time.Duration(math.Ceil(float64(time.Second) / r.PerSecond))
}

// RateLimit sets the budgets of WithRateLimit.
type RateLimit struct {
	// Reads is the budget of listPets and getPet, by principal; nil sets
	// none.
	Reads Limiter
	// Creates is the budget of createPet, by principal; nil sets none.
	Creates Limiter
	// MaxInFlight is the most requests that one principal may have in
	// flight at once, over all its connections. Watch streams do not
	// count: Watch caps them. One more is answered 429
	// rate_limited with the Retry-After of WithRetryAfter, and never
	// reaches the store; over HTTP/1.1 the answer also closes its
	// connection (Connection: close), so that a caller with more
	// connections than its share gives them back. 0 sets no bound. It keeps one caller, however
	// many connections it opens, from taking what the server has for all:
	// a host that bounds its connections or the request bodies it reads at
	// once sets it to a share of that bound (a quarter, say).
	MaxInFlight int
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
// credential spends none, and requests served without authentication (the
// OpenAPI document and the docs page) have none. By default there is no
// limit.
//
// NewLimiter gives a Limiter that keeps the budgets in the process; a host
// with several instances behind one balancer backs the interface with a
// shared store instead (package redislimit, in its own module, keeps them
// in Redis), so that a caller's budget does not grow with the instances.
//
// Size a budget from what a well-behaved client does, not from what the
// server can take: a burst that covers the largest batch a client sends at
// once (a page walk, a retry storm after an outage) and a rate a few times
// its sustained rate. The server's capacity divided by the number of callers
// that may be busy at once bounds the rate from above. For example,
// Reads: NewLimiter(Rate{PerSecond: 100, Burst: 200}, 0) and
// Creates: NewLimiter(Rate{PerSecond: 20, Burst: 40}, 0).
func WithRateLimit(l RateLimit) Option {
	return optionFunc(func(c *config) error {
		if l.MaxInFlight < 0 {
			return fmt.Errorf("WithRateLimit: MaxInFlight %d is negative; use 0 for no bound", l.MaxInFlight)
		}
		c.rateLimit = l
		return nil
	})
}

// rateLimited returns the error of a request over its budget, to wait
// wait: a requestError made for each, since its Retry-After varies.
func rateLimited(wait time.Duration) *requestError {
	secs := max(int64((wait+time.Second-1)/time.Second), 1)
	return &requestError{code: httpapi.CodeRateLimited, header: "Retry-After", value: []string{strconv.FormatInt(secs, 10)},
		message: "too many requests for this API key; retry after " + strconv.FormatInt(secs, 10) + " s"}
}

// errLimiter wraps the error of a Limiter that failed.
var errLimiter = errors.New("rate limiter failed")

// limit spends one request of the caller's budget for op. It returns nil
// when the request may go on, the 429 when it may not, and an error that
// the handler answers 503 when the Limiter failed and FailOpen is not set.
func (h *handler) limit(ctx context.Context, op Operation) error {
	l := h.rateLimit.Reads
	if op == OpCreatePet {
		l = h.rateLimit.Creates
	}
	if l == nil {
		return nil
	}
	wait, err := l.Allow(ctx, Principal(ctx))
	switch {
	case err != nil && h.rateLimit.FailOpen:
		return nil
	case err != nil:
		return fmt.Errorf("%w: %w: %w", ErrUnavailable, errLimiter, err)
	case wait > 0:
		return rateLimited(wait)
	}
	return nil
}

// inFlight counts the requests that each principal has in flight, for
// RateLimit.MaxInFlight. It holds only principals with requests in flight,
// so its size is bounded by the requests served at once.
type inFlight struct {
	max  int
	full *requestError // the answer to a request over max, shared

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

// take counts a request of principal in flight, or returns the error to
// answer when principal has max already. done must follow a nil error.
func (f *inFlight) take(principal string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.busy[principal] >= f.max {
		return f.full
	}
	f.busy[principal]++
	return nil
}

func (f *inFlight) done(principal string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if n := f.busy[principal]; n > 1 {
		f.busy[principal] = n - 1
	} else {
		delete(f.busy, principal)
	}
}

// DefaultLimiterKeys is the number of keys that a Limiter made by NewLimiter
// with maxKeys 0 keeps budgets for.
const DefaultLimiterKeys = 100_000

// limiterShards is the number of parts of a MemoryLimiter's table, each
// under a lock of its own, so that callers on many cores rarely wait for
// each other.
const limiterShards = 64

// A MemoryLimiter is a Limiter that keeps each key's budget in the process,
// with the generic cell rate algorithm (GCRA): for each key, the time at
// which its bucket is full again. It is safe for concurrent use, spends no
// allocation on a key it keeps, and takes a few tens of nanoseconds.
//
// Its memory has a bound however many keys it sees: it keeps at most
// maxKeys keys (or 64, if maxKeys is smaller), each by a 64-bit hash of the
// key rather than the key itself, in 16 bytes, under 100 with the map
// around them: under 10 MB for DefaultLimiterKeys. When a part of its table is full, it first forgets the
// keys whose buckets are full again, which loses nothing, and then, if it
// must, keys at random, which gives those keys a full bucket early. Only a
// host with more callers busy at once than maxKeys would see that; raise
// maxKeys then.
type MemoryLimiter struct {
	interval time.Duration // the time one request takes to come back
	window   time.Duration // interval × burst: how far ahead a bucket may run
	perShard int
	seed     maphash.Seed
	now      func() time.Time
	shards   [limiterShards]limiterShard
}

type limiterShard struct {
	mu   sync.Mutex
	full map[uint64]int64 // key hash → Unix nanoseconds at which its bucket is full
	_    [40]byte         // keeps shards on cache lines of their own
}

// NewLimiter returns a MemoryLimiter with the budget r for each key, which
// keeps at most maxKeys keys (DefaultLimiterKeys when maxKeys is 0). It
// panics when r cannot work (see Rate) or maxKeys is negative, as a
// programming mistake.
func NewLimiter(r Rate, maxKeys int) *MemoryLimiter {
	if err := r.check("NewLimiter"); err != nil {
		panic(err)
	}
	if maxKeys < 0 {
		panic(fmt.Sprintf("NewLimiter: maxKeys %d is negative; use 0 for %d", maxKeys, DefaultLimiterKeys))
	}
	if maxKeys == 0 {
		maxKeys = DefaultLimiterKeys
	}
	interval := r.Interval()
	l := &MemoryLimiter{interval: interval, window: interval * time.Duration(r.Burst),
		perShard: max(maxKeys/limiterShards, 1), seed: maphash.MakeSeed(), now: time.Now}
	for i := range l.shards {
		l.shards[i].full = make(map[uint64]int64)
	}
	return l
}

// Allow spends one request of key's budget (see Limiter). It never fails.
func (l *MemoryLimiter) Allow(_ context.Context, key string) (time.Duration, error) {
	h := maphash.String(l.seed, key)
	s := &l.shards[h%limiterShards]
	now := l.now().UnixNano()
	s.mu.Lock()
	defer s.mu.Unlock()
	full, ok := s.full[h]
	if !ok && len(s.full) >= l.perShard {
		s.evict(now, l.perShard)
	}
	full = max(full, now) + int64(l.interval)
	if ahead := time.Duration(full - now); ahead > l.window {
		return ahead - l.window, nil
	}
	s.full[h] = full
	return 0, nil
}

// evict makes room for keys in a shard that holds most keys: it forgets
// the keys whose buckets are full by now and then, while the shard holds
// more than seven eighths of most, keys at random, so that a stream of new
// keys pays for a sweep only once in most/8 keys.
func (s *limiterShard) evict(now int64, most int) {
	for h, full := range s.full {
		if full <= now {
			delete(s.full, h)
		}
	}
	for h := range s.full {
		if len(s.full) <= most-most/8-1 {
			break
		}
		delete(s.full, h)
	}
}

// Len returns the number of keys whose budgets l keeps: at most maxKeys.
func (l *MemoryLimiter) Len() int {
	n := 0
	for i := range l.shards {
		s := &l.shards[i]
		s.mu.Lock()
		n += len(s.full)
		s.mu.Unlock()
	}
	return n
}
