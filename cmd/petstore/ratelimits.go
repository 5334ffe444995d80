package main

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/redislimit"
	"github.com/redis/go-redis/v9"
)

// budget is the value of -read-limit and -create-limit: "RATE,BURST"
// (requests a second, and at once), or "off".
type budget struct {
	petstore.Rate
	off bool
}

func (b *budget) String() string {
	if b.off {
		return "off"
	}
	return strconv.FormatFloat(b.PerSecond, 'f', -1, 64) + "," + strconv.Itoa(b.Burst)
}

func (b *budget) Set(s string) error {
	if strings.TrimSpace(s) == "off" {
		*b = budget{off: true}
		return nil
	}
	rate, burst, ok := strings.Cut(s, ",")
	r, err1 := strconv.ParseFloat(strings.TrimSpace(rate), 64)
	n, err2 := strconv.Atoi(strings.TrimSpace(burst))
	if !ok || err1 != nil || err2 != nil || !(r > 0) || r > 1e9 || n < 1 {
		return fmt.Errorf("%q: want RATE,BURST, such as 200,400 (requests a second, and at once), or off", s)
	}
	*b = budget{Rate: petstore.Rate{PerSecond: r, Burst: n}}
	return nil
}

// rateFlags holds the flags of the callers' budgets.
type rateFlags struct {
	reads, creates budget
	redisURL       string // "" keeps the budgets in the process
	failOpen       bool
	pause          time.Duration
}

// check reports a Redis URL that cannot be one.
func (f *rateFlags) check() error {
	if _, err := redis.ParseURL(f.redisURL); f.redisURL != "" && err != nil {
		return fmt.Errorf("-redis: %v; want a URL such as redis://localhost:6379/0", err)
	}
	return nil
}

// limiters returns the handler's budgets, checking that Redis answers, and
// a function that closes them.
func (f *rateFlags) limiters(ctx context.Context, logger *slog.Logger) (petstore.RateLimit, func(), error) {
	l := petstore.RateLimit{FailOpen: f.failOpen, Pause: f.pause}
	newLimiter := func(_ string, r petstore.Rate) petstore.Limiter { return petstore.NewLimiter(r, 0) }
	closeAll := func() {}
	if f.redisURL != "" {
		opts, err := redis.ParseURL(f.redisURL)
		if err != nil {
			return l, nil, err
		}
		opts.DialTimeout, opts.ReadTimeout, opts.WriteTimeout = time.Second, time.Second, time.Second
		redis.SetLogger(redisLogger{logger})
		rdb := redislimit.NewClient(opts)
		pingCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		if err := rdb.Ping(pingCtx).Err(); err != nil && !f.failOpen {
			rdb.Close()
			return l, nil, fmt.Errorf("-redis %s: %v; start Redis, fix the URL, or set -rate-limit-fail-open", redisRedact(f.redisURL), err)
		}
		newLimiter = func(prefix string, r petstore.Rate) petstore.Limiter { return redislimit.New(rdb, prefix, r) }
		closeAll = func() { rdb.Close() }
	}
	if !f.reads.off {
		l.Reads = newLimiter("petstore:reads:", f.reads.Rate)
	}
	if !f.creates.off {
		l.Creates = newLimiter("petstore:creates:", f.creates.Rate)
	}
	return l, closeAll, nil
}

// redisRedact returns the Redis URL without its password.
func redisRedact(u string) string {
	if opts, err := redis.ParseURL(u); err == nil && opts.Password != "" {
		return strings.ReplaceAll(u, opts.Password, "xxxxx")
	}
	return u
}

// redisLogger is go-redis's logger writing through the server's, at WARN.
type redisLogger struct{ logger *slog.Logger }

func (l redisLogger) Printf(ctx context.Context, format string, v ...any) {
	l.logger.WarnContext(ctx, "petstore: redis: "+fmt.Sprintf(format, v...))
}
