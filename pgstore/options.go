package pgstore

import (
	"fmt"
	"log/slog"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/petstore-go/petstore/internal/sqlstore"
)

// An Option configures a Store in New.
type Option interface {
	apply(*config) error
}

type optionFunc func(*config) error

func (f optionFunc) apply(c *config) error { return f(c) }

// config is what the options set.
type config struct {
	schema   string // "" leaves the table to the search_path
	table    string
	maxBatch int
	sqlstore.Options

	listen        *pgx.ConnConfig // nil: the pool's
	replicas      []*pgxpool.Pool
	replicaWait   time.Duration
	replicaMaxLag time.Duration
}

// Defaults of the options.
const (
	// DefaultTable is the name of the table that a Store keeps its pets in
	// unless WithTable chooses another.
	DefaultTable = "pets"
	// DefaultMaxBatch is the most pets that one Add statement inserts
	// unless WithMaxBatch chooses another number.
	DefaultMaxBatch = 64
)

// maxTableLength is the longest table name accepted, in bytes: PostgreSQL
// truncates identifiers to 63 bytes, and the names derived from the table's
// name ("<table>_migrations", "<table>_status_id_idx", "<table>_keys",
// "<table>_keys_time_idx") must stay within that.
const maxTableLength = 63 - len("_status_id_idx")

const maxSchemaLength = 63 // the longest schema name accepted, in bytes

// WithTable sets the name of the table that holds the pets. The default is
// DefaultTable, "pets". The name is used exactly as given, quoted, so it is
// case sensitive; it must not be empty, must be valid UTF-8 without NUL
// bytes and at most 49 bytes long. Migrate also creates a table named
// "<name>_migrations", a table of idempotency keys named "<name>_keys" and
// the indexes "<name>_status_id_idx" and "<name>_keys_time_idx" in the same
// schema. Stores with different tables can share a schema.
func WithTable(name string) Option {
	return optionFunc(func(c *config) error {
		if err := validIdentifier("WithTable", "table", name, maxTableLength); err != nil {
			return err
		}
		c.table = name
		return nil
	})
}

// WithSchema sets the schema that holds the store's tables. The default,
// the empty string, leaves the table name unqualified, so that PostgreSQL
// looks it up in the connection's search_path (by default "public"). A name
// that is not empty is used exactly as given, quoted; it must be valid UTF-8
// without NUL bytes and at most 63 bytes long. Migrate creates the schema
// if it does not exist.
func WithSchema(name string) Option {
	return optionFunc(func(c *config) error {
		if name != "" {
			if err := validIdentifier("WithSchema", "schema", name, maxSchemaLength); err != nil {
				return err
			}
		}
		c.schema = name
		return nil
	})
}

// WithMaxBatch sets the most pets that one Add statement inserts when
// concurrent calls of Add are committed together (see the package doc). The
// default is DefaultMaxBatch, 64; 1 turns batching off, so that every Add
// commits alone.
func WithMaxBatch(n int) Option {
	return optionFunc(func(c *config) error {
		if n < 1 {
			return fmt.Errorf("WithMaxBatch: %d is not positive; use a size such as %d, or 1 to commit every pet alone", n, DefaultMaxBatch)
		}
		c.maxBatch = n
		return nil
	})
}

// WithKeyRetention sets how long the Store keeps an idempotency key after
// the Add that stored it; once that time has passed, the key is forgotten
// (see the package doc). The default, and the least that New accepts, is
// petstore.MinKeyRetention, 24 hours: a shorter retention would break the
// petstore.Store contract that clients rely on to retry safely.
func WithKeyRetention(d time.Duration) Option {
	return optionFunc(func(c *config) error { return c.SetKeyRetention(d) })
}

// WithClock sets the clock that the Store reads to date the idempotency
// keys it stores and to decide which have outlived their retention. The
// default is time.Now; tests pass a clock they can move. The clock is read
// by the Store alone: the database's own clock plays no part.
func WithClock(now func() time.Time) Option {
	return optionFunc(func(c *config) error { return c.SetClock(now) })
}

// WithLogger sets the logger to which the Store reports, at debug level,
// each pass that prunes idempotency keys, and, as a warning, a pass that
// failed. The default discards everything.
func WithLogger(l *slog.Logger) Option {
	return optionFunc(func(c *config) error { return c.SetLogger(l) })
}

// validIdentifier reports why name, given to the option opt, cannot be used
// as an identifier of at most maxLen bytes, or returns nil.
func validIdentifier(opt, what, name string, maxLen int) error {
	switch {
	case name == "":
		return fmt.Errorf("%s: the %s name is empty; give a name such as %q", opt, what, DefaultTable)
	case !utf8.ValidString(name):
		return fmt.Errorf("%s: the %s name %q is not valid UTF-8; give the name in UTF-8", opt, what, name)
	case strings.IndexByte(name, 0) >= 0:
		return fmt.Errorf("%s: the %s name %q contains a NUL byte; remove it", opt, what, name)
	case len(name) > maxLen:
		return fmt.Errorf("%s: the %s name %q is %d bytes long; the limit is %d, so shorten it", opt, what, name, len(name), maxLen)
	}
	return nil
}
