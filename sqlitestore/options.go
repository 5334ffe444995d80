package sqlitestore

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/petstore-go/petstore"
)

// An Option configures a Store in Open.
type Option interface {
	apply(*config) error
}

type optionFunc func(*config) error

func (f optionFunc) apply(c *config) error { return f(c) }

// config is what the options set.
type config struct {
	retention time.Duration
	now       func() time.Time
	logger    *slog.Logger
}

func defaultConfig() config {
	return config{
		retention: petstore.MinKeyRetention,
		now:       time.Now,
		logger:    slog.New(slog.DiscardHandler),
	}
}

// WithKeyRetention sets how long a Store keeps an idempotency key after the
// Add that stored it. The default, and the least that Open accepts, is
// petstore.MinKeyRetention (24 hours). A key older than this is forgotten:
// a create with it stores a new pet, and the key's row is deleted (see the
// package doc).
func WithKeyRetention(d time.Duration) Option {
	return optionFunc(func(c *config) error {
		if d < petstore.MinKeyRetention {
			return fmt.Errorf("WithKeyRetention: %v is shorter than petstore.MinKeyRetention (%v); give at least that", d, petstore.MinKeyRetention)
		}
		c.retention = d
		return nil
	})
}

// WithClock sets the clock that stamps idempotency keys and decides when
// they are forgotten. The default is time.Now; tests move a clock of their
// own past the retention. The clock is not used for anything else: pets carry
// no time.
func WithClock(now func() time.Time) Option {
	return optionFunc(func(c *config) error {
		if now == nil {
			return errors.New("WithClock: the clock is nil; give time.Now or a function of your own")
		}
		c.now = now
		return nil
	})
}

// WithLogger sets the logger that a Store writes to: a line at debug level
// for each pass that forgets idempotency keys, and a line at warning level
// when such a pass fails (creates go on). The default discards everything.
func WithLogger(l *slog.Logger) Option {
	return optionFunc(func(c *config) error {
		if l == nil {
			return errors.New("WithLogger: the logger is nil; give slog.New(slog.DiscardHandler) to discard")
		}
		c.logger = l
		return nil
	})
}

// applyOptions applies opts to the defaults and returns every mistake
// joined in one error.
func applyOptions(opts []Option) (config, error) {
	c := defaultConfig()
	var errs []error
	for _, o := range opts {
		if o == nil {
			errs = append(errs, errors.New("an option is nil; remove it"))
			continue
		}
		if err := o.apply(&c); err != nil {
			errs = append(errs, err)
		}
	}
	return c, errors.Join(errs...)
}
