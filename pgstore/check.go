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

// A tablePrivileges names a table of the Store and the privileges that
// serving needs on it.
type tablePrivileges struct {
	name       string   // unqualified
	privileges []string // in the order a GRANT lists them
}

// servingPrivileges returns what a role that serves needs on each table:
// SELECT and INSERT on the pets, SELECT, INSERT and DELETE on the keys (the
// DELETE forgets expired keys), and SELECT on the migrations table, which
// Check reads.
func (s *Store) servingPrivileges() []tablePrivileges {
	return []tablePrivileges{
		{s.table, []string{"SELECT", "INSERT"}},
		{s.table + "_keys", []string{"SELECT", "INSERT", "DELETE"}},
		{s.table + "_migrations", []string{"SELECT"}},
	}
}

// latestVersion returns the newest version of the embedded migrations.
func latestVersion() (int, error) {
	ms, err := migrations()
	if err != nil {
		return 0, err
	}
	return ms[len(ms)-1].Version, nil
}

// SchemaVersion returns the version of the schema that the Store's tables
// are at, and the version that this package needs (which Migrate brings
// them to). The current version is 0 when Migrate has not run: its table of
// versions does not exist. A version that a newer release applied is
// counted only when every version before it was applied too, so the tables
// are at the version needed exactly when current >= needed.
func (s *Store) SchemaVersion(ctx context.Context) (current, needed int, err error) {
	needed, err = latestVersion()
	if err != nil {
		return 0, 0, err
	}
	applied, exists, err := s.appliedVersions(ctx)
	if err != nil || !exists {
		return 0, needed, err
	}
	for current < len(applied) && slices.Contains(applied, current+1) {
		current++
	}
	return current, needed, nil
}

// appliedVersions returns the versions that the migrations table lists,
// and whether it exists.
func (s *Store) appliedVersions(ctx context.Context) (versions []int, exists bool, err error) {
	var oid *uint32
	err = s.pool.QueryRow(ctx, `SELECT to_regclass($1)::oid`, s.versions).Scan(&oid)
	if err != nil {
		return nil, false, wrapError(ctx, "read the schema version of "+s.relation, err)
	}
	if oid == nil {
		return nil, false, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT version FROM `+s.versions)
	if err != nil {
		return nil, true, wrapError(ctx, "read the schema version of "+s.relation, err)
	}
	versions, err = pgx.CollectRows(rows, pgx.RowTo[int])
	if err != nil {
		return nil, true, wrapError(ctx, "read the schema version of "+s.relation, err)
	}
	return versions, true, nil
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
// there is; and petstore.ErrUnavailable or
// ctx.Err() as the Store's other methods do when the database cannot
// answer.
func (s *Store) Check(ctx context.Context) error {
	schema, err := s.resolveSchema(ctx, s.pool)
	if err != nil {
		if errors.Is(err, ErrNoSchema) || errors.Is(err, ErrPrivilege) {
			return err
		}
		return wrapError(ctx, "check "+s.relation, err)
	}
	tables := s.servingPrivileges()
	names := make([]string, len(tables))
	for i, t := range tables {
		names[i] = t.name
	}
	// One round trip: the schema, and each table that exists in it with
	// the privileges the role holds on it.
	rows, err := s.pool.Query(ctx, `SELECT current_user::text, n.oid IS NOT NULL, coalesce(has_schema_privilege(n.oid, 'USAGE'), false),
	coalesce(c.relname::text, ''),
	coalesce(has_table_privilege(c.oid, 'SELECT'), false),
	coalesce(has_table_privilege(c.oid, 'INSERT'), false),
	coalesce(has_table_privilege(c.oid, 'DELETE'), false)
FROM (SELECT 1) AS one
LEFT JOIN pg_namespace n ON n.nspname = $1
LEFT JOIN pg_class c ON c.relnamespace = n.oid AND c.relname = ANY ($2::text[]) AND c.relkind IN ('r', 'p')`, schema, names)
	if err != nil {
		return wrapError(ctx, "check "+s.relation, err)
	}
	var (
		role          string
		schemaExists  bool
		schemaUsage   bool
		held          = map[string][]string{} // table: the privileges held
		tablesPresent = map[string]bool{}
	)
	for rows.Next() {
		var table string
		var sel, ins, del bool
		if err := rows.Scan(&role, &schemaExists, &schemaUsage, &table, &sel, &ins, &del); err != nil {
			rows.Close()
			return wrapError(ctx, "check "+s.relation, err)
		}
		if table == "" {
			continue
		}
		tablesPresent[table] = true
		for p, ok := range map[string]bool{"SELECT": sel, "INSERT": ins, "DELETE": del} {
			if ok {
				held[table] = append(held[table], p)
			}
		}
	}
	if err := rows.Err(); err != nil {
		return wrapError(ctx, "check "+s.relation, err)
	}
	needed, err := latestVersion()
	if err != nil {
		return err
	}
	if !schemaExists {
		return fmt.Errorf("%w: the schema %s does not exist, so neither does the table %s; "+
			"run Migrate (as a role that may create the schema) to create them at version %d",
			ErrNotMigrated, sqlIdentifier(schema), s.relation, needed)
	}
	var grants []string
	if !schemaUsage {
		grants = append(grants, fmt.Sprintf("GRANT USAGE ON SCHEMA %s TO %s;", sqlIdentifier(schema), sqlIdentifier(role)))
	}
	var missingTables []string
	for _, t := range tables {
		if !tablesPresent[t.name] {
			missingTables = append(missingTables, sqlIdentifier(schema)+"."+sqlIdentifier(t.name))
			continue
		}
		var missing []string
		for _, p := range t.privileges {
			if !slices.Contains(held[t.name], p) {
				missing = append(missing, p)
			}
		}
		if len(missing) > 0 {
			grants = append(grants, fmt.Sprintf("GRANT %s ON %s.%s TO %s;",
				strings.Join(missing, ", "), sqlIdentifier(schema), sqlIdentifier(t.name), sqlIdentifier(role)))
		}
	}
	if len(missingTables) > 0 {
		return fmt.Errorf("%w: the table %s does not exist; run Migrate (as a role that may create tables in %s) to create it at version %d",
			ErrNotMigrated, strings.Join(missingTables, " and the table "), sqlIdentifier(schema), needed)
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
