package sqlitestore

import (
	"log/slog"
	"time"

	"github.com/petstore-go/petstore/internal/sqlstore"
)

// An Option configures a Store in Open.
type Option interface {
	apply(*sqlstore.Options) error
}

type optionFunc func(*sqlstore.Options) error

func (f optionFunc) apply(c *sqlstore.Options) error { return f(c) }

// WithKeyRetention sets how long a Store keeps an idempotency key after the
// Add that stored it. The default, and the least that Open accepts, is
// petstore.MinKeyRetention (24 hours). A key older than this is forgotten:
// a create with it stores a new pet, and the key's row is deleted (see the
// package doc).
func WithKeyRetention(d time.Duration) Option {
	return optionFunc(func(c *sqlstore.Options) error { return c.SetKeyRetention(d) })
}

// WithClock sets the clock that stamps idempotency keys and decides when
// they are forgotten. The default is time.Now; tests move a clock of their
// own past the retention. The clock is not used for anything else: pets carry
// no time.
func WithClock(now func() time.Time) Option {
	return optionFunc(func(c *sqlstore.Options) error { return c.SetClock(now) })
}

// WithLogger sets the logger that a Store writes to: a line at debug level
// for each pass that forgets idempotency keys, and a line at warning level
// when such a pass, or a checkpoint of the -wal file, fails (creates go
// on). The default discards everything.
func WithLogger(l *slog.Logger) Option {
	return optionFunc(func(c *sqlstore.Options) error { return c.SetLogger(l) })
}
