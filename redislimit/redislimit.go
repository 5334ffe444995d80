// Package redislimit keeps the budgets of petstore.WithRateLimit in Redis,
// so that the instances of a server behind one balancer share them: a
// caller gets its budget once, however many instances serve it.
//
// A Limiter spends from a budget with the generic cell rate algorithm
// (GCRA), as the in-process petstore.MemoryLimiter does, in one Lua script
// that Redis runs atomically on its own clock: for each key, Redis holds the
// time at which the key's bucket is full again, and the key expires then,
// so Redis holds a key only for the callers that spent from their budget
// within the last Burst intervals.
//
// Typical usage in a server:
//
//	rdb := redislimit.NewClient(opts)
//	reads := redislimit.New(rdb, "petstore:reads:", petstore.Rate{PerSecond: 100, Burst: 200})
//	creates := redislimit.New(rdb, "petstore:creates:", petstore.Rate{PerSecond: 20, Burst: 40})
//	h, err := petstore.New(..., petstore.WithRateLimit(petstore.RateLimit{Reads: reads, Creates: creates}))
//
// It needs Redis 5 or later.
package redislimit

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/petstore-go/petstore"
	"github.com/redis/go-redis/v9"
)

// gcra spends one request of the budget of KEYS[1]. ARGV[1] is the
// interval of the budget, ARGV[2] the interval times the burst, both in
// microseconds. It returns, in microseconds, the wait (0 when the budget
// held a request, and otherwise the time until it holds one, spending
// nothing), and then the requests that the budget holds now and the time
// until it holds one more, as petstore.Budget has them.
var gcra = redis.NewScript(`
local interval = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local full = tonumber(redis.call('GET', KEYS[1]) or now)
if full < now then full = now end
local ahead = full - now + interval
local wait = 0
if ahead > window then
	wait = ahead - window
	ahead = ahead - interval
else
	redis.call('SET', KEYS[1], string.format('%d', full + interval), 'PX', math.ceil(ahead / 1000))
end
local left = math.max(math.floor((window - ahead) / interval), 0)
return {wait, left, ahead + (left + 1) * interval - window}
`)

// A Limiter is a petstore.BudgetLimiter that keeps its budgets in Redis.
// It is safe for concurrent use. Its Allow and Spend cost one round trip
// to Redis each.
type Limiter struct {
	rdb      redis.Scripter
	rate     petstore.Rate
	prefix   string
	interval int64 // microseconds
	window   int64 // microseconds
	timeout  time.Duration
}

// NewClient returns a client of Redis for Limiters, made with a copy of
// opts in which each call ends by its context's deadline, also while it
// reads (ContextTimeoutEnabled), and is never retried (MaxRetries -1), so
// that the deadline of WithTimeout bounds a call whole; with go-redis's
// defaults, a call to a stalled Redis would last several read timeouts.
func NewClient(opts *redis.Options) *redis.Client {
	o := *opts
	o.ContextTimeoutEnabled, o.MaxRetries = true, -1
	return redis.NewClient(&o)
}

// DefaultTimeout is the time that a Limiter gives each call to Redis
// unless WithTimeout sets another.
const DefaultTimeout = time.Second

// An Option configures the Limiter that New returns.
type Option func(*Limiter)

// WithTimeout sets the time that a Limiter gives each call to Redis, from
// asking the pool for a connection to reading the answer; past it, Allow
// and Spend fail. The default is DefaultTimeout. It panics when d is not
// positive.
func WithTimeout(d time.Duration) Option {
	if d <= 0 {
		panic(fmt.Sprintf("redislimit.WithTimeout: %v is not positive; use a time such as %v", d, DefaultTimeout))
	}
	return func(l *Limiter) { l.timeout = d }
}

var _ petstore.BudgetLimiter = (*Limiter)(nil)

// New returns a Limiter that keeps the budget r for each key in rdb, under
// the Redis key prefix followed by the key (a principal). Limiters of
// different budgets need different prefixes; instances that share a budget
// use the same prefix and rate. It panics when r cannot work (a rate or
// burst that is not positive).
func New(rdb redis.Scripter, prefix string, r petstore.Rate, opts ...Option) *Limiter {
	if !(r.PerSecond > 0) || math.IsInf(r.PerSecond, 1) || r.Burst < 1 {
		panic(fmt.Sprintf("redislimit.New: the rate %v a second with a burst of %d cannot work; use a positive rate and a burst of 1 or more",
			r.PerSecond, r.Burst))
	}
	interval := max(r.Interval().Microseconds(), 1)
	l := &Limiter{rdb: rdb, rate: r, prefix: prefix, interval: interval, window: interval * int64(r.Burst), timeout: DefaultTimeout}
	for _, o := range opts {
		o(l)
	}
	return l
}

// Allow spends one request of key's budget (see petstore.Limiter). It
// returns an error when Redis cannot be reached or fails, which the
// handler answers 503 unless petstore.RateLimit.FailOpen is set.
func (l *Limiter) Allow(ctx context.Context, key string) (time.Duration, error) {
	b, err := l.Spend(ctx, key)
	return b.Wait, err
}

// Spend spends one request of key's budget and tells what is left of it
// (see petstore.BudgetLimiter). It fails as Allow does.
func (l *Limiter) Spend(ctx context.Context, key string) (petstore.Budget, error) {
	ctx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	v, err := gcra.Run(ctx, l.rdb, []string{l.prefix + key}, l.interval, l.window).Int64Slice()
	if err != nil {
		return petstore.Budget{}, fmt.Errorf("redislimit: %w", err)
	}
	if len(v) != 3 {
		return petstore.Budget{}, fmt.Errorf("redislimit: the script returned %d values, want 3", len(v))
	}
	return petstore.Budget{Wait: time.Duration(v[0]) * time.Microsecond, Remaining: int(v[1]), Reset: time.Duration(v[2]) * time.Microsecond}, nil
}

// Rate returns the budget of each key (see petstore.BudgetLimiter).
func (l *Limiter) Rate() petstore.Rate { return l.rate }
