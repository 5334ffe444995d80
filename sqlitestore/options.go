package sqlitestore

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/petstore-go/petstore/internal/options"
	"github.com/petstore-go/petstore/internal/sqlstore"
)

// An Option configures a Store in Open.
type Option interface {
	apply(*config) error
}

type optionFunc func(*config) error

func (f optionFunc) apply(c *config) error { return f(c) }

// config is what the options set.
type config struct {
	sqlstore.Options
	walLimit int64
}

// WithKeyRetention sets how long a Store keeps an idempotency key after the
// Add that stored it. The default, and the least that Open accepts, is
// petstore.MinKeyRetention (24 hours). A key older than this is forgotten:
// a create with it stores a new pet, and the key's row is deleted (see the
// package doc).
func WithKeyRetention(d time.Duration) Option {
	return optionFunc(func(c *config) error { return c.SetKeyRetention(d) })
}

// WithClock sets the clock that stamps idempotency keys and decides when
// they are forgotten. The default is time.Now; tests move a clock of their
// own past the retention. The clock is not used for anything else: pets carry
// no time.
func WithClock(now func() time.Time) Option {
	return optionFunc(func(c *config) error { return c.SetClock(now) })
}

// WithLogger sets the logger that a Store writes to: a line at debug level
// for each pass that forgets idempotency keys, and a line at warning level
// when such a pass fails (creates go on). The default discards everything.
func WithLogger(l *slog.Logger) Option {
	return optionFunc(func(c *config) error { return c.SetLogger(l) })
}

// DefaultWALLimit is the size of the -wal file past which a Store
// checkpoints it and truncates it, unless WithWALLimit sets another.
const DefaultWALLimit = 64 << 20

// WithWALLimit sets the size, in bytes, past which a Store copies the
// -wal file's commits into the data file and truncates it (a TRUNCATE
// checkpoint), at most once a second, after a commit; it is also the
// file's journal_size_limit, the size SQLite cuts it back to when it
// starts it over. The default is DefaultWALLimit (64 MiB); at least 64 KiB.
//
// SQLite checkpoints on its own every thousand pages or so, but cannot
// reuse or shrink the file while a reader, in any process, holds a
// snapshot older than its end; the file then grows with every commit. The
// checkpoint that WithWALLimit asks for never waits for such a reader: it
// fails at once (see CheckpointsBlocked), and the next one, a second or more
// later, brings the file back under the limit once the reader has let go.
func WithWALLimit(bytes int64) Option {
	return optionFunc(func(c *config) error {
		if bytes < 64<<10 {
			return fmt.Errorf("WithWALLimit: %d bytes is below 64 KiB; give at least 65536", bytes)
		}
		c.walLimit = bytes
		return nil
	})
}

// applyOptions applies opts to the defaults and returns every mistake
// joined in one error.
func applyOptions(opts []Option) (config, error) {
	c := config{Options: sqlstore.DefaultOptions(), walLimit: DefaultWALLimit}
	err := options.Apply(&c, opts, Option.apply)
	return c, err
}
