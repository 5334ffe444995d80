package memstore

import (
	"log/slog"
	"time"

	"github.com/petstore-go/petstore"
)

// An Option configures a Store made by New.
type Option func(*Store)

// WithKeyRetention sets how long the store keeps an idempotency key after
// the Add that stored it: a retry within it is answered with the first pet,
// and after it the key is forgotten, so that a key may be used again. The
// default, and the least, is petstore.MinKeyRetention (24 hours): a shorter
// d is raised to it, as the Store contract requires.
func WithKeyRetention(d time.Duration) Option {
	return func(s *Store) { s.retention = max(d, petstore.MinKeyRetention) }
}

// WithClock sets the clock by which keys age. The default is time.Now; a
// test moves its own clock past the retention to see keys forgotten.
func WithClock(now func() time.Time) Option {
	return func(s *Store) { s.now = now }
}

// WithLogger sets the logger of the store, which logs a line at debug level
// for each pass that forgets keys. The default logs nothing.
func WithLogger(l *slog.Logger) Option {
	return func(s *Store) { s.log = l }
}
