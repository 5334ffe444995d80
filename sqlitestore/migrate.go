package sqlitestore

import (
	"context"
	"database/sql"
	"embed"
	"fmt"

	"github.com/petstore-go/petstore/internal/sqlstore"
)

// applicationID marks a file as a petstore database in the application ID
// field of its header ("pet1"), so that Open refuses another program's
// database rather than add tables to it.
const applicationID = 0x70657431

// migrationFiles holds the schema's versions, one file each, named
// NNNN_description.sql and applied in the order of NNNN (see migrate).
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

// SchemaVersion is the version of the schema that this package writes: the
// number of its last migration, kept in the file's user_version. Open
// upgrades a file with a lower version and refuses one with a higher
// version.
const SchemaVersion = 1

// querier is a *sql.DB or a *sql.Conn.
type querier interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
	QueryRowContext(context.Context, string, ...any) *sql.Row
	PrepareContext(context.Context, string) (*sql.Stmt, error)
}

// readHeader reads the application ID and user version of the file behind
// q, in one statement, so that both come from one commit: read apart, they
// may straddle the migration of another Store. It is the first read of the
// file, so a file that is not a database fails here. A file whose header
// this version of the package cannot use is refused with an error that
// says why. It changes nothing.
func readHeader(ctx context.Context, q querier, file string) (appID, version int64, err error) {
	if err := q.QueryRowContext(ctx, "SELECT * FROM pragma_application_id, pragma_user_version").Scan(&appID, &version); err != nil {
		return 0, 0, err
	}
	switch {
	case appID != 0 && appID != applicationID:
		return 0, 0, fmt.Errorf("sqlitestore: %s is a SQLite database of another application (application_id %#x); give the path of a petstore database or of a new file", file, appID)
	case appID == 0 && version != 0:
		return 0, 0, fmt.Errorf("sqlitestore: %s is a SQLite database of another application (user_version %d without the petstore application_id); give the path of a petstore database or of a new file", file, version)
	case version > SchemaVersion:
		return 0, 0, fmt.Errorf("sqlitestore: %s has schema version %d, written by a newer version of sqlitestore; this version knows versions up to %d and leaves the file as it is: upgrade the program", file, version, SchemaVersion)
	}
	return appID, version, nil
}

// migrate brings the schema of the file behind conn up to SchemaVersion, in
// one BEGIN IMMEDIATE transaction, so that a failure leaves the file as it
// was and two processes that open a new file at once apply each migration
// once: the second finds the first's version and has nothing left to do.
func migrate(ctx context.Context, conn *sql.Conn, file string) (err error) {
	ms, err := sqlstore.Migrations(migrationFiles, "migrations")
	if err != nil {
		return fmt.Errorf("sqlitestore: %w", err)
	}
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_, _ = conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
		}
	}()
	_, version, err := readHeader(ctx, conn, file) // again, now that the file is locked
	if err != nil {
		return err
	}
	for _, m := range ms[version:] {
		if _, err := conn.ExecContext(ctx, m.SQL); err != nil {
			return fmt.Errorf("migration %s: %w", m.Name, err)
		}
	}
	if version < SchemaVersion {
		// PRAGMA takes no parameters; both values are constants.
		if _, err := conn.ExecContext(ctx, fmt.Sprintf("PRAGMA application_id = %d; PRAGMA user_version = %d", applicationID, len(ms))); err != nil {
			return err
		}
	}
	_, err = conn.ExecContext(ctx, "COMMIT")
	return err
}

// checkFile runs PRAGMA quick_check on the file behind q and then
// checkSchema, and returns an error that names the file and the first
// problem found, if any. It reads the whole file once: see docs/backup.md
// for what that costs.
func checkFile(ctx context.Context, q querier, file string) error {
	var result string
	if err := q.QueryRowContext(ctx, "PRAGMA quick_check(1)").Scan(&result); err != nil {
		return fmt.Errorf("sqlitestore: %s: quick_check: %w", file, err)
	}
	if result != "ok" {
		return fmt.Errorf("sqlitestore: %s is damaged: quick_check says %q; restore it from a backup (petstore restore)", file, result)
	}
	return checkSchema(ctx, q, file)
}
