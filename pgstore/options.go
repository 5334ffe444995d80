package pgstore

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// DefaultTable is the name of the table that a Store keeps its pets in
// unless WithTable chooses another.
const DefaultTable = "pets"

// maxTableLength is the longest table name accepted, in bytes: PostgreSQL
// truncates identifiers to 63 bytes, and the names derived from the table's
// name ("<table>_migrations", "<table>_status_id_idx") must stay within that.
const maxTableLength = 63 - len("_status_id_idx")

// maxSchemaLength is the longest schema name accepted, in bytes.
const maxSchemaLength = 63

// An Option configures a Store in New.
type Option func(*config)

// config is what the options set.
type config struct {
	schema string
	table  string
}

// WithTable sets the name of the table that holds the pets. The default is
// DefaultTable. The name is used exactly as given, quoted, so it is case
// sensitive; it must not be empty, must be valid UTF-8 without NUL bytes and
// at most 49 bytes long. Migrate also creates a table named
// "<name>_migrations" and an index named "<name>_status_id_idx" in the same
// schema. Stores with different tables can share a schema.
func WithTable(name string) Option {
	return func(c *config) { c.table = name }
}

// WithSchema sets the schema that holds the store's tables. The default,
// the empty string, leaves the table name unqualified, so that PostgreSQL
// looks it up in the connection's search_path (by default "public"). The
// name is used exactly as given, quoted; Migrate creates the schema if it
// does not exist.
func WithSchema(name string) Option {
	return func(c *config) { c.schema = name }
}

// validIdentifier reports why name cannot be used as an identifier of at
// most maxLen bytes, or returns nil.
func validIdentifier(what, name string, maxLen int) error {
	switch {
	case name == "":
		return fmt.Errorf("pgstore: the %s name is empty", what)
	case !utf8.ValidString(name):
		return fmt.Errorf("pgstore: the %s name %q is not valid UTF-8", what, name)
	case strings.IndexByte(name, 0) >= 0:
		return fmt.Errorf("pgstore: the %s name %q contains a NUL byte", what, name)
	case len(name) > maxLen:
		return fmt.Errorf("pgstore: the %s name %q is %d bytes long; the limit is %d", what, name, len(name), maxLen)
	}
	return nil
}
