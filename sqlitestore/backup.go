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

// BackupInfo describes a backup that Backup wrote.
type BackupInfo struct {
	Path     string        // the backup's absolute path
	Pets     int64         // the pets it holds
	Bytes    int64         // its size
	Duration time.Duration // how long it took
}

// Backup writes a consistent copy of the petstore data file src to dst,
// while Stores in this process or others go on reading and writing src.
// The copy is SQLite's VACUUM INTO, inside one read transaction: it holds
// every commit made before it began, those still in src's -wal file
// included, and none made after. It never stops a writer, since WAL lets
// readers and the writer run at once; while it runs, the -wal file cannot
// be checkpointed past the copy's snapshot and grows (see CheckpointsBlocked).
//
// The copy is written to a new file beside dst, owner-only (0600), flushed
// to the disk, checked (its header, its pets counted) and only then
// renamed to dst, and the directory flushed: dst is always either what it
// was before or a complete new backup, even if the process is killed or
// the machine loses power. A killed Backup may leave its temporary file,
// named .BASE.*.tmp beside dst; a failed one leaves nothing. A backup is
// itself a data file, in rollback-journal mode until a Store opens it.
//
// Backup refuses a src that does not exist or is not a petstore data file
// of a version this package knows, and a dst that has a -wal file beside
// it: that is a data file in use, not a backup. When ctx is done, Backup
// stops, leaves dst as it was, and returns ctx's error.
func Backup(ctx context.Context, src, dst string) (_ BackupInfo, err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("sqlitestore.Backup: %w", err)
		}
	}()
	start := time.Now()
	if src, err = filepath.Abs(src); err != nil {
		return BackupInfo{}, err
	}
	if dst, err = filepath.Abs(dst); err != nil {
		return BackupInfo{}, err
	}
	if _, err := os.Lstat(dst + "-wal"); err == nil {
		return BackupInfo{}, fmt.Errorf("%s has a -wal file beside it, so a store uses it as its data file; give another path", dst)
	}
	if fi, err := os.Stat(dst); err == nil && !fi.Mode().IsRegular() {
		return BackupInfo{}, fmt.Errorf("%s is not a regular file; give the path of a file", dst)
	}
	db, err := openExisting(ctx, src, url.Values{})
	if err != nil {
		return BackupInfo{}, err
	}
	defer db.Close()

	// VACUUM INTO accepts an empty file, so the temporary file is made
	// first, with its mode, and never follows a link.
	tmp, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".*.tmp")
	if err != nil {
		return BackupInfo{}, err
	}
	defer os.Remove(tmp.Name())              // gone when renamed
	defer os.Remove(tmp.Name() + "-journal") // left only by a failed write
	if err := tmp.Close(); err != nil {
		return BackupInfo{}, err
	}
	if _, err := db.ExecContext(ctx, "VACUUM INTO ?", tmp.Name()); err != nil {
		op := "backup: writing the copy beside " + dst
		if free, _, serr := diskSpace(tmp.Name()); serr == nil {
			op += fmt.Sprintf(" (%d bytes free on its disk)", free)
		}
		return BackupInfo{}, wrapError(ctx, src, op, err)
	}
	info := BackupInfo{Path: dst}
	copied, err := openExisting(ctx, tmp.Name(), url.Values{"_pragma": {"query_only(ON)"}})
	if err == nil {
		err = copied.QueryRowContext(ctx, "SELECT count(*) FROM pets").Scan(&info.Pets)
		copied.Close()
	}
	if err != nil {
		return BackupInfo{}, fmt.Errorf("checking the copy: %w", err)
	}
	if err := syncFile(tmp.Name()); err != nil {
		return BackupInfo{}, err
	}
	fi, err := os.Stat(tmp.Name())
	if err != nil {
		return BackupInfo{}, err
	}
	if err := os.Rename(tmp.Name(), dst); err != nil {
		return BackupInfo{}, err
	}
	if err := syncFile(filepath.Dir(dst)); err != nil {
		return BackupInfo{}, err
	}
	info.Bytes, info.Duration = fi.Size(), time.Since(start)
	return info, nil
}

// openExisting opens a pool of one connection on the petstore data file
// at file, which must exist, and checks its header as Open does; a file
// with no schema yet is refused too, as it holds no store. params are
// added to the pragmas of every connection.
func openExisting(ctx context.Context, file string, params url.Values) (*sql.DB, error) {
	fi, err := os.Stat(file)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%s does not exist; give the path of a petstore data file", file)
	case err != nil:
		return nil, err
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("%s is not a regular file; give the path of a petstore data file", file)
	}
	db, err := sql.Open("sqlite", dsn(file, params))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	db.SetMaxOpenConns(1)
	appID, _, err := readHeader(ctx, db, file)
	if err == nil && appID != applicationID {
		err = fmt.Errorf("%s is not a petstore data file: it holds no petstore schema", file)
	}
	if code(err) == sqlite3.SQLITE_NOTADB {
		err = fmt.Errorf("%s is not a SQLite database; give the path of a petstore data file: %w", file, err)
	}
	if err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// syncFile flushes the file or directory at name to the disk; a
// directory, so that a rename in it survives a power loss.
func syncFile(name string) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return err
	}
	return f.Close()
}
