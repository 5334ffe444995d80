package main

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/petstore-go/petstore"
)

// postgresCurrentSchema connects to the database and returns the schema
// that tables without a schema go to: the first schema of the search_path
// that exists (PostgreSQL's current_schema()). When there is none, it says
// which schema is missing and how to create it, rather than leaving the
// table's creation to fail with PostgreSQL's "no schema has been selected to
// create in".
func postgresCurrentSchema(ctx context.Context, pool *pgxpool.Pool) (string, error) {
	var schema *string
	var searchPath string
	err := pool.QueryRow(ctx, `SELECT current_schema(), current_setting('search_path')`).Scan(&schema, &searchPath)
	if err != nil {
		return "", fmt.Errorf("cannot reach PostgreSQL: %s", withoutUnavailable(err))
	}
	if schema != nil {
		return *schema, nil
	}
	var names []string
	for _, name := range splitSearchPath(searchPath) {
		if name != "$user" {
			names = append(names, name)
		}
	}
	switch len(names) {
	case 0:
		return "", fmt.Errorf("PostgreSQL's search_path (%s) names no schema that exists, so there is nowhere to create "+
			"the pets table; set search_path=NAME in the URL's query to a schema that exists, or create one with CREATE SCHEMA NAME",
			searchPath)
	case 1:
		return "", fmt.Errorf("the schema %q that PostgreSQL's search_path names does not exist, so there is nowhere to create "+
			"the pets table; create it with CREATE SCHEMA %s, or set search_path in the URL's query to a schema that exists",
			names[0], sqlIdentifier(names[0]))
	}
	return "", fmt.Errorf("none of the schemas that PostgreSQL's search_path names (%s) exists, so there is nowhere to create "+
		"the pets table; create the first with CREATE SCHEMA %s, or set search_path in the URL's query to a schema that exists",
		searchPath, sqlIdentifier(names[0]))
}

// splitSearchPath returns the schema names in the value of search_path:
// separated by commas, unquoted names folded to lower case as PostgreSQL
// does, quoted ones as they are.
func splitSearchPath(searchPath string) []string {
	var names []string
	var name strings.Builder
	quoted, inQuotes := false, false
	flush := func() {
		if s := name.String(); quoted || s != "" {
			if !quoted {
				s = strings.ToLower(s)
			}
			names = append(names, s)
		}
		name.Reset()
		quoted = false
	}
	for i := 0; i < len(searchPath); i++ {
		c := searchPath[i]
		switch {
		case inQuotes && c == '"' && i+1 < len(searchPath) && searchPath[i+1] == '"':
			name.WriteByte('"')
			i++
		case c == '"':
			inQuotes = !inQuotes
			quoted = true
		case inQuotes:
			name.WriteByte(c)
		case c == ',':
			flush()
		case c == ' ' || c == '\t': // around names; unquoted ones hold none
		default:
			name.WriteByte(c)
		}
	}
	flush()
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

// withoutUnavailable returns err's message without the words of
// petstore.ErrUnavailable, which a store adds so that the handler answers
// 503: at start-up they would read as if the server, not the database, were
// at fault.
func withoutUnavailable(err error) string {
	return strings.Replace(err.Error(), petstore.ErrUnavailable.Error()+": ", "", 1)
}
