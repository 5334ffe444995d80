package pgstore

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"slices"
	"strings"
	"text/template"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/internal/sqlstore"
)

// migrationFiles holds the schema's versions, one file each, named
// NNNN_description.sql and applied in the order of NNNN. They are templates:
// {{.Table}} is the pets table, {{.Keys}} the table of idempotency keys,
// {{.StatusIndex}} the name of the pets table's index on (status, id) and
// {{.KeysTimeIndex}} that of the keys table's index on created_at, all
// quoted; {{literal X}} quotes X as a string literal.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

// literal quotes s as an SQL string literal, for the migrations' template
// function of that name.
func literal(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// migrations returns every migration, ascending by version.
func migrations() ([]sqlstore.Migration, error) {
	ms, err := sqlstore.Migrations(migrationFiles, "migrations")
	if err != nil {
		return nil, fmt.Errorf("pgstore: %w", err)
	}
	return ms, nil
}

// Migrate creates the Store's tables, or upgrades them to the schema this
// version of the package expects (docs/postgres.md lists the tables and
// their versions). It is safe to call on every start, from any number of
// processes at once: it creates the schema set with WithSchema if it does
// not exist; then, in one transaction under an advisory lock keyed by the
// schema and table, so that a failure leaves the tables as they were, it
// applies each embedded version that "<table>_migrations" does not list.
// Versions that a newer release applied are left alone, so older instances
// keep running during a rolling upgrade. Tables already at the version
// needed are only read, so a role that may only serve can call Migrate.
// When the search_path names no schema that exists, the error wraps
// ErrNoSchema and names the CREATE SCHEMA to run.
//
// The role that runs Migrate needs the right to create tables in the
// schema, and to create the schema when it does not exist. The role that
// serves needs USAGE on the schema, SELECT and INSERT on the pets table,
// SELECT, INSERT and DELETE (to forget expired keys) on the keys table and
// SELECT on the migrations table; no right to change the schema, nor any
// on the identity sequence. Check verifies them and names the GRANT
// statements missing.
func (s *Store) Migrate(ctx context.Context) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	if _, err := s.resolveSchema(ctx, "migrate"); err != nil {
		return err
	}
	// A role that may not read the versions goes on, to the error of the
	// step that needs the right.
	current, needed, err := s.SchemaVersion(ctx)
	switch {
	case errors.Is(err, petstore.ErrUnavailable) || ctx.Err() != nil:
		return fmt.Errorf("pgstore: migrate %s: %w", s.relation, err)
	case err == nil && current >= needed:
		return nil
	}
	// Read committed, whatever the server's default: after waiting for a
	// lock, each statement must see what the previous holder committed.
	txOptions := pgx.TxOptions{IsoLevel: pgx.ReadCommitted}
	if s.schema != "" {
		// Not CREATE SCHEMA IF NOT EXISTS, which needs the right to
		// create schemas even when the schema exists.
		err := pgx.BeginTxFunc(ctx, s.pool, txOptions, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1::int4, hashtext($2::text))`,
				lockClassSchema, s.schema); err != nil {
				return err
			}
			var exists bool
			if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT FROM pg_namespace WHERE nspname = $1)`, s.schema).Scan(&exists); err != nil || exists {
				return err
			}
			_, err := tx.Exec(ctx, "CREATE SCHEMA "+pgx.Identifier{s.schema}.Sanitize())
			return err
		})
		if err != nil {
			return wrapError(ctx, "migrate "+s.relation+": create schema", err)
		}
	}
	err = pgx.BeginTxFunc(ctx, s.pool, txOptions, func(tx pgx.Tx) error {
		var schema *string
		if s.schema != "" {
			schema = &s.schema
		}
		if _, err := tx.Exec(ctx,
			`SELECT pg_advisory_xact_lock($1::int4, hashtext(coalesce($2::text, current_schema(), '') || '.' || $3::text))`,
			lockClassMigrate, schema, s.table); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS `+s.versions+` (
	version    integer     PRIMARY KEY,
	name       text        NOT NULL,
	applied_at timestamptz NOT NULL DEFAULT now()
)`); err != nil {
			return err
		}
		rows, _ := tx.Query(ctx, `SELECT version FROM `+s.versions) // the error comes back from CollectRows
		applied, err := pgx.CollectRows(rows, pgx.RowTo[int])
		if err != nil {
			return err
		}
		data := struct{ Table, StatusIndex, Keys, KeysTimeIndex string }{
			Table:         s.relation,
			StatusIndex:   pgx.Identifier{s.table + "_status_id_idx"}.Sanitize(),
			Keys:          s.keys,
			KeysTimeIndex: pgx.Identifier{s.table + "_keys_time_idx"}.Sanitize(),
		}
		for _, m := range ms {
			if slices.Contains(applied, m.Version) {
				continue
			}
			var sql strings.Builder
			t, err := template.New(m.Name).Option("missingkey=error").Funcs(template.FuncMap{"literal": literal}).Parse(m.SQL)
			if err == nil {
				err = t.Execute(&sql, data)
			}
			if err != nil {
				return fmt.Errorf("migration %s: %w", m.Name, err)
			}
			if _, err := tx.Exec(ctx, sql.String()); err != nil {
				return fmt.Errorf("migration %s: %w", m.Name, err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO `+s.versions+` (version, name) VALUES ($1, $2)`, m.Version, m.Name); err != nil {
				return fmt.Errorf("migration %s: %w", m.Name, err)
			}
		}
		return nil
	})
	if err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "42501" { // insufficient_privilege: permission denied
			return fmt.Errorf("pgstore: migrate %s: %w; the role that runs Migrate needs the right to create tables "+
				"in the schema (and to create the schema when it does not exist): run it as the tables' owner", s.relation, err)
		}
		return wrapError(ctx, "migrate "+s.relation, err)
	}
	return nil
}
