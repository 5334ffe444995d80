package pgstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
)

// Errors of Check and SchemaVersion, to match with errors.Is.
var (
	// ErrNotMigrated is wrapped by Check's error when the Store's tables
	// do not exist or lack a version of the schema that this package
	// needs: Migrate, run by a role that may create tables, brings them
	// there.
	ErrNotMigrated = errors.New("pgstore: the tables are not at the schema version this package needs")
	// ErrPrivilege is wrapped by Check's error when the connection's role
	// lacks a privilege that serving needs. The error's text names the
	// GRANT statements that give them.
	ErrPrivilege = errors.New("pgstore: the role lacks privileges that the Store needs")
)

// SchemaVersion returns the version of the schema that the Store's tables
// are at, and the version that this package needs (which Migrate brings
// them to). The current version is 0 when Migrate has not run: its table of
// versions does not exist. A version that a newer release applied is
// counted only when every version before it was applied too, so the tables
// are at the version needed exactly when current >= needed.
func (s *Store) SchemaVersion(ctx context.Context) (current, needed int, err error) {
	ms, err := migrations()
	if err != nil {
		return 0, 0, err
	}
	needed = len(ms) // the versions run 1, 2, 3, ...
	var exists bool
	err = s.pool.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, s.versions).Scan(&exists)
	if err == nil && exists {
		rows, _ := s.pool.Query(ctx, `SELECT version FROM `+s.versions) // the error comes back from CollectRows
		var applied []int
		applied, err = pgx.CollectRows(rows, pgx.RowTo[int])
		for current < len(applied) && slices.Contains(applied, current+1) {
			current++
		}
	}
	if err != nil {
		return 0, needed, wrapError(ctx, "read the schema version of "+s.relation, err)
	}
	return current, needed, nil
}

// Check reports whether the Store can serve through its pool as the pool's
// role: the schema exists and the role may use it, the tables exist and
// are at the version this package needs, and the role holds every
// privilege that serving needs (see Migrate). It changes nothing, and
// needs no privilege beyond those. Call it on start when Migrate is run
// apart, by another role, and from a readiness check, so that a missing
// grant shows there rather than as failed requests.
//
// Its error wraps ErrNotMigrated when Migrate has yet to run, naming the
// version found and the version needed; ErrPrivilege when the role lacks
// privileges, naming the GRANT statements that give them, to be run by the
// tables' owner; ErrNoSchema when the search_path names no schema that
// exists; an error that says that no pet ID is left, and wraps no
// ErrUnavailable, since no retry helps, when the table holds the last ID
// there is; and petstore.ErrUnavailable or ctx.Err() as the Store's other
// methods do when the database cannot answer.
func (s *Store) Check(ctx context.Context) error {
	schema, err := s.resolveSchema(ctx, "check")
	if err != nil {
		return err
	}
	ms, err := migrations()
	if err != nil {
		return err
	}
	needed := len(ms) // the versions run 1, 2, 3, ...
	// What serving needs: SELECT and INSERT on the pets, SELECT, INSERT and
	// DELETE (to forget expired keys) on the keys, SELECT on the versions.
	// One round trip: the schema, and for each table whether it exists and
	// the privileges it needs that the role lacks, in the order of a GRANT.
	rows, _ := s.pool.Query(ctx, `SELECT current_user::text, n.oid IS NOT NULL, coalesce(has_schema_privilege(n.oid, 'USAGE'), false),
	t.name, c.oid IS NOT NULL, coalesce((SELECT string_agg(p.name, ', ' ORDER BY p.i)
		FROM unnest(string_to_array(t.privileges, ', ')) WITH ORDINALITY AS p (name, i) WHERE NOT has_table_privilege(c.oid, p.name)), '')
FROM unnest($2::text[], $3::text[]) WITH ORDINALITY AS t (name, privileges, i)
LEFT JOIN pg_namespace n ON n.nspname = $1
LEFT JOIN pg_class c ON c.relnamespace = n.oid AND c.relname = t.name AND c.relkind IN ('r', 'p')
ORDER BY t.i`, schema, []string{s.table, s.table + "_keys", s.table + "_migrations"},
		[]string{"SELECT, INSERT", "SELECT, INSERT, DELETE", "SELECT"})
	var (
		role, table, lacking                   string
		schemaExists, schemaUsage, tableExists bool
		grants, missingTables                  []string
	)
	_, err = pgx.ForEachRow(rows, []any{&role, &schemaExists, &schemaUsage, &table, &tableExists, &lacking}, func() error {
		name := sqlIdentifier(schema) + "." + sqlIdentifier(table)
		if !tableExists {
			missingTables = append(missingTables, name)
		} else if lacking != "" {
			grants = append(grants, fmt.Sprintf("GRANT %s ON %s TO %s;", lacking, name, sqlIdentifier(role)))
		}
		return nil
	})
	if err != nil {
		return wrapError(ctx, "check "+s.relation, err)
	}
	if !schemaExists {
		return fmt.Errorf("%w: the schema %s does not exist, so neither does the table %s; "+
			"run Migrate (as a role that may create the schema) to create them at version %d",
			ErrNotMigrated, sqlIdentifier(schema), s.relation, needed)
	}
	if len(missingTables) > 0 {
		return fmt.Errorf("%w: the table %s does not exist; run Migrate (as a role that may create tables in %s) to create it at version %d",
			ErrNotMigrated, strings.Join(missingTables, " and the table "), sqlIdentifier(schema), needed)
	}
	if !schemaUsage {
		grants = append([]string{fmt.Sprintf("GRANT USAGE ON SCHEMA %s TO %s;", sqlIdentifier(schema), sqlIdentifier(role))}, grants...)
	}
	if len(grants) > 0 {
		return fmt.Errorf("%w: the role %s cannot serve from %s.%s; as the tables' owner, run: %s",
			ErrPrivilege, sqlIdentifier(role), sqlIdentifier(schema), sqlIdentifier(s.table), strings.Join(grants, " "))
	}
	current, _, err := s.SchemaVersion(ctx)
	if err != nil {
		return err
	}
	if current < needed {
		return fmt.Errorf("%w: %s is at schema version %d and this release needs version %d; "+
			"run Migrate (as a role that may create tables in %s) to upgrade it",
			ErrNotMigrated, s.relation, current, needed, sqlIdentifier(schema))
	}
	return s.idsLeft(ctx)
}
