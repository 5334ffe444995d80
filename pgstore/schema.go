package pgstore

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
)

// ErrNoSchema is wrapped by the errors of Migrate and Check when the
// connection's search_path names no schema that exists, so that there is
// nowhere to keep the tables.
var ErrNoSchema = errors.New("pgstore: the search_path names no schema that exists")

// resolveSchema returns the schema that holds the Store's tables: the one
// set with WithSchema, or else the first schema of the connection's
// search_path that exists (PostgreSQL's current_schema()). When there is
// none, or the role may not use it, the error, of the operation op, says
// what to run, rather than leaving a statement to fail with PostgreSQL's
// "no schema has been selected to create in".
func (s *Store) resolveSchema(ctx context.Context, op string) (string, error) {
	if s.schema != "" {
		return s.schema, nil
	}
	var schema, existing *string
	var searchPath, role string
	if err := s.pool.QueryRow(ctx, `SELECT current_schema(), current_setting('search_path')`).Scan(&schema, &searchPath); err != nil {
		return "", wrapError(ctx, op+" "+s.relation, err)
	}
	if schema != nil {
		return *schema, nil
	}
	// current_schema() is NULL too when the schemas exist but the role
	// may not use them: then the fix is a GRANT.
	names := slices.DeleteFunc(splitSearchPath(searchPath), func(name string) bool { return name == "$user" })
	if err := s.pool.QueryRow(ctx, `SELECT (SELECT n.nspname::text FROM unnest($1::text[]) WITH ORDINALITY AS p (name, i)
	JOIN pg_namespace n ON n.nspname = p.name ORDER BY p.i LIMIT 1), current_user::text`, names).Scan(&existing, &role); err != nil {
		return "", wrapError(ctx, op+" "+s.relation, err)
	}
	var msg string
	switch {
	case existing != nil:
		return "", fmt.Errorf("%w: the role %s may not use the schema %s that PostgreSQL's search_path names; as the schema's owner, run: "+
			"GRANT USAGE ON SCHEMA %s TO %s;", ErrPrivilege, sqlIdentifier(role), sqlIdentifier(*existing), sqlIdentifier(*existing), sqlIdentifier(role))
	case len(names) == 0:
		msg = fmt.Sprintf("PostgreSQL's search_path (%s) names no schema that exists, so there is nowhere to create "+
			"the %s table; set search_path=NAME in the URL's query to a schema that exists, or create one with CREATE SCHEMA NAME",
			searchPath, s.table)
	case len(names) == 1:
		msg = fmt.Sprintf("the schema %q that PostgreSQL's search_path names does not exist, so there is nowhere to create "+
			"the %s table; create it with CREATE SCHEMA %s, or set search_path in the URL's query to a schema that exists",
			names[0], s.table, sqlIdentifier(names[0]))
	default:
		msg = fmt.Sprintf("none of the schemas that PostgreSQL's search_path names (%s) exists, so there is nowhere to create "+
			"the %s table; create the first with CREATE SCHEMA %s, or set search_path in the URL's query to a schema that exists",
			searchPath, s.table, sqlIdentifier(names[0]))
	}
	return "", &schemaError{msg: "pgstore: " + msg}
}

// schemaError is the error of resolveSchema when no schema exists: its
// message, and ErrNoSchema to match.
type schemaError struct{ msg string }

func (e *schemaError) Error() string        { return e.msg }
func (e *schemaError) Is(target error) bool { return target == ErrNoSchema }

// searchPathName matches a schema name in the value of search_path: quoted,
// with "" for a quote inside, or bare.
var searchPathName = regexp.MustCompile(`"((?:[^"]|"")*)"|[^\s,"]+`)

// splitSearchPath returns the schema names in the value of search_path:
// unquoted names folded to lower case as PostgreSQL does, quoted ones as
// they are.
func splitSearchPath(searchPath string) []string {
	var names []string
	for _, m := range searchPathName.FindAllStringSubmatch(searchPath, -1) {
		if m[0][0] == '"' {
			names = append(names, strings.ReplaceAll(m[1], `""`, `"`))
		} else {
			names = append(names, strings.ToLower(m[0]))
		}
	}
	return names
}

// plainIdentifier matches the names that SQL may give without quotes.
var plainIdentifier = regexp.MustCompile(`^[a-z_][a-z0-9_$]*$`)

// sqlIdentifier returns name as it is written in SQL: as it is when it
// needs no quotes, quoted otherwise.
func sqlIdentifier(name string) string {
	if plainIdentifier.MatchString(name) {
		return name
	}
	return pgx.Identifier{name}.Sanitize()
}
