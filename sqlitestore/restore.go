package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"time"

	sqlite3 "modernc.org/sqlite/lib"
)

// ErrInUse is wrapped by the error of Restore when another connection, in
// this process or another (a running server), has the data file open.
var ErrInUse = errors.New("sqlitestore: the data file is in use")

// Restore replaces the data file at file with a copy of the backup at
// backup, and returns the path that the file it replaced was renamed to,
// beside it, or "" when there was none.
//
// It checks backup as Open checks a file (a petstore data file, of a
// schema version this package knows, whose schema is exactly what the
// migrations make: see ErrSchema) and with PRAGMA quick_check, and
// copies it beside file (as Backup does, so that backup itself is left
// untouched). It then takes an exclusive lock on file, which it gets only
// when no connection has it open: a Store keeps a lock on its file for as
// long as it is open, so Restore refuses, with an error wrapping ErrInUse,
// while any Store, in any process, serves it. Under the lock it copies the
// -wal file's commits into file and removes the -wal file, raises the
// copy's ID sequence to the largest ID that file ever issued, so that no
// ID is issued twice for different pets, renames file to
// FILE.replaced-TIME (UTC, to the second) and the copy to file, and
// flushes the directory. A killed Restore leaves file as it was, or the
// backup in its place; a server that starts while Restore runs may open
// either. Stop the server first.
func Restore(ctx context.Context, backup, file string) (replaced string, err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("sqlitestore.Restore: %w", err)
		}
	}()
	if file, err = filepath.Abs(file); err != nil {
		return "", err
	}
	db, err := openExisting(ctx, backup, url.Values{})
	if err != nil {
		return "", err
	}
	err = checkFile(ctx, db, backup)
	db.Close()
	if err != nil {
		return "", err
	}
	if _, err := os.Lstat(file); err == nil {
		if err := checkOwnership(file); err != nil {
			return "", err
		}
	}
	copied := filepath.Join(filepath.Dir(file), "."+filepath.Base(file)+".restore")
	// A killed Restore may leave its copy and, killed while carrying the
	// ID sequence into it, the copy's hot journal, whose pages of the old
	// copy SQLite would roll back into the new one.
	os.Remove(copied)
	if err := os.Remove(copied + "-journal"); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	if _, err := Backup(ctx, backup, copied); err != nil {
		return "", fmt.Errorf("copying %s: %w", backup, err)
	}
	defer os.Remove(copied)              // gone when renamed
	defer os.Remove(copied + "-journal") // left only by a failed write

	if _, err := os.Lstat(file); errors.Is(err, fs.ErrNotExist) {
		if err := os.Rename(copied, file); err != nil {
			return "", err
		}
		return "", syncFile(filepath.Dir(file))
	}
	// The exclusive lock, kept until the connection closes, after the
	// renames: no other connection can open the old file meanwhile.
	lock, err := sql.Open("sqlite", file+"?"+url.Values{"_pragma": {"busy_timeout(0)", "locking_mode(EXCLUSIVE)"}}.Encode())
	if err != nil {
		return "", err
	}
	defer lock.Close()
	conn, err := lock.Conn(ctx)
	if err != nil {
		return "", fmt.Errorf("%s: %w", file, err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN EXCLUSIVE"); err != nil {
		if code(err) == sqlite3.SQLITE_BUSY || code(err) == sqlite3.SQLITE_LOCKED {
			return "", fmt.Errorf("%s is open in another connection, such as a running server: %w; stop it first", file, ErrInUse)
		}
		return "", fmt.Errorf("%s: %w", file, err)
	}
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		return "", fmt.Errorf("%s: %w", file, err)
	}
	// Leaving WAL mode copies the -wal file's commits into the file and
	// removes it, so that the file kept aside is whole and no -wal file
	// of it is left to be read with the restored one.
	var mode string
	if err := conn.QueryRowContext(ctx, "PRAGMA journal_mode = DELETE").Scan(&mode); err != nil {
		return "", fmt.Errorf("%s: %w", file, err)
	}
	if _, err := os.Lstat(file + "-wal"); err == nil {
		return "", fmt.Errorf("%s-wal is still there after a checkpoint; nothing was changed", file)
	}
	var issued int64
	if err := conn.QueryRowContext(ctx, sqlIssued).Scan(&issued); err != nil {
		return "", fmt.Errorf("%s: reading the largest ID it issued, which the restored file must not issue again: %w; "+
			"to restore without it, move it and its -wal file aside first", file, err)
	}
	if err := carryIDs(ctx, copied, issued); err != nil {
		return "", err
	}
	replaced = file + ".replaced-" + time.Now().UTC().Format("20060102T150405Z")
	if err := os.Rename(file, replaced); err != nil {
		return "", err
	}
	if err := os.Rename(copied, file); err != nil {
		return "", fmt.Errorf("%w (the data file is now %s)", err, replaced)
	}
	if err := syncFile(filepath.Dir(file)); err != nil {
		return replaced, err
	}
	// The lock's rollback journal, if SQLite kept one, belongs to the
	// file now kept aside.
	conn.Close()
	lock.Close()
	os.Remove(file + "-journal")
	return replaced, nil
}

// sqlIssued is the largest pet ID that a data file ever issued: its
// sequence, which AUTOINCREMENT keeps, or its largest ID when it has none.
const sqlIssued = `SELECT max(coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'pets'), 0),
	coalesce((SELECT max(id) FROM pets), 0))`

// carryIDs raises the ID sequence of the data file at file to issued, when
// it is lower, so that its next pet's ID is above issued.
func carryIDs(ctx context.Context, file string, issued int64) error {
	db, err := sql.Open("sqlite", dsn(file, url.Values{}))
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	defer db.Close()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	defer tx.Rollback() // a no-op after Commit
	_, err = tx.ExecContext(ctx, `INSERT INTO sqlite_sequence (name, seq) SELECT 'pets', 0
WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'pets')`)
	if err == nil {
		_, err = tx.ExecContext(ctx, `UPDATE sqlite_sequence SET seq = max(seq, ?) WHERE name = 'pets'`, issued)
	}
	if err == nil {
		err = tx.Commit()
	}
	if err != nil {
		return fmt.Errorf("%s: carrying the ID sequence: %w", file, err)
	}
	return db.Close()
}
