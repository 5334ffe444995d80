package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/petstore-go/petstore/sqlitestore"
)

const (
	// The variables of the -backup-* flags.
	backupDirVar      = "PETSTORE_BACKUP_DIR"
	backupIntervalVar = "PETSTORE_BACKUP_INTERVAL"
	backupKeepVar     = "PETSTORE_BACKUP_KEEP"

	// backupPrefix and backupSuffix frame the names of scheduled backups:
	// petstore-20260102T150405.000Z.db, which sort by time.
	backupPrefix = "petstore-"
	backupSuffix = ".db"
)

// backupFlags are the flags of scheduled backups: off unless dir is set.
type backupFlags struct {
	dir      string
	interval time.Duration
	keep     int
	ready    bool // /readyz counts them
}

// check reports flags that cannot work for store, the store chosen.
func (b *backupFlags) check(store storeKind) error {
	switch {
	case b.dir == "":
		return nil
	case store != storeSQLite:
		return fmt.Errorf("-backup-dir: scheduled backups copy the SQLite data file; with %s, back up with the database's own tools (pg_dump), or none for -store memory", store)
	case b.interval <= 0:
		return fmt.Errorf("-backup-interval %v: want more than 0", b.interval)
	case b.keep < 1:
		return fmt.Errorf("-backup-keep %d: want 1 or more", b.keep)
	}
	return nil
}

// backupScheduler backs the data file up to a directory at start and every
// interval, keeping the newest, and counts the outcomes for /metrics.
type backupScheduler struct {
	src    string
	flags  backupFlags
	logger *slog.Logger
	start  time.Time

	lastOK    atomic.Int64 // Unix nanoseconds of the last success, 0 before the first
	successes atomic.Int64
	failures  atomic.Int64
}

// newBackupScheduler makes and checks the directory of flags and returns a
// scheduler of backups of src into it.
func newBackupScheduler(src string, flags backupFlags, logger *slog.Logger) (*backupScheduler, error) {
	err := os.MkdirAll(flags.dir, 0o700)
	if err == nil {
		flags.dir, err = filepath.Abs(flags.dir)
	}
	if err == nil {
		err = checkBackupDir(flags.dir)
	}
	if err != nil {
		return nil, fmt.Errorf("-backup-dir: %w", err)
	}
	return &backupScheduler{src: src, flags: flags, logger: logger, start: time.Now()}, nil
}

// checkBackupDir refuses a backup directory in which another user could
// replace a backup.
func checkBackupDir(dir string) error {
	fi, err := os.Lstat(dir)
	switch {
	case err != nil:
		return err
	case fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("%s is a symbolic link; give the path of the directory itself", dir)
	case !fi.IsDir():
		return fmt.Errorf("%s is not a directory", dir)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("%s is owned by uid %d, not by this process's user (uid %d), who could then replace the backups; chown it, or give a directory of your own", dir, st.Uid, os.Geteuid())
	}
	if perm := fi.Mode().Perm(); perm&0o022 != 0 {
		return fmt.Errorf("%s may be written by other users (mode %v), who could then replace the backups; make it owner-only: chmod 700 %s", dir, perm, dir)
	}
	return nil
}

// once takes one backup and removes those past the number to keep.
func (b *backupScheduler) once(ctx context.Context) {
	name := filepath.Join(b.flags.dir, backupPrefix+time.Now().UTC().Format("20060102T150405.000Z")+backupSuffix)
	err := checkBackupDir(b.flags.dir)
	var info sqlitestore.BackupInfo
	if err == nil {
		info, err = sqlitestore.Backup(ctx, b.src, name)
	}
	if err != nil {
		if ctx.Err() != nil {
			return // shutting down
		}
		b.logger.Error("petstore: scheduled backup failed", "path", name, "err", err, "failures", b.failures.Add(1))
		return
	}
	b.successes.Add(1)
	b.lastOK.Store(time.Now().UnixNano())
	b.logger.Info("petstore: backed up", "path", info.Path, "pets", info.Pets, "bytes", info.Bytes, "took", info.Duration.Round(time.Millisecond))
	if err := b.prune(); err != nil {
		b.logger.Warn("petstore: removing old backups", "dir", b.flags.dir, "err", err)
	}
}

// prune removes all but the newest flags.keep backups of the directory.
func (b *backupScheduler) prune() error {
	entries, err := os.ReadDir(b.flags.dir) // sorted by name, so the oldest first
	if err != nil {
		return err
	}
	entries = slices.DeleteFunc(entries, func(e os.DirEntry) bool {
		n := e.Name()
		return !strings.HasPrefix(n, backupPrefix) || !strings.HasSuffix(n, backupSuffix) || !e.Type().IsRegular()
	})
	var errs []error
	for _, e := range entries[:max(0, len(entries)-b.flags.keep)] {
		errs = append(errs, os.Remove(filepath.Join(b.flags.dir, e.Name())))
	}
	return errors.Join(errs...)
}

// check, with -backup-ready, reports a last success (or start) older than
// twice the interval.
func (b *backupScheduler) check() error {
	ns := b.lastOK.Load()
	age := time.Since(b.start)
	if ns != 0 {
		age = time.Since(time.Unix(0, ns))
	}
	switch {
	case !b.flags.ready || age <= 2*b.flags.interval:
		return nil
	case ns == 0:
		return fmt.Errorf("no backup has succeeded in the %v since start (-backup-interval %v; %d failed; see the log)", age.Round(time.Second), b.flags.interval, b.failures.Load())
	}
	return fmt.Errorf("the last successful backup is %v old, more than twice -backup-interval (%v); %d failed since start (see the log)", age.Round(time.Second), b.flags.interval, b.failures.Load())
}

// startBackups starts the backups of store that flags ask for, at once and
// then every interval, returning the scheduler (nil for none) and a
// function that stops it.
func startBackups(ctx context.Context, store *sqlitestore.Store, flags backupFlags, logger *slog.Logger) (*backupScheduler, func(), error) {
	if flags.dir == "" || store == nil {
		return nil, func() {}, nil
	}
	b, err := newBackupScheduler(store.Path(), flags, logger)
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	b.logger.Info("petstore: backing up the data file on a schedule", "dir", b.flags.dir, "interval", b.flags.interval, "keep", b.flags.keep)
	go func() {
		defer close(done)
		tick := time.NewTicker(b.flags.interval)
		defer tick.Stop()
		for {
			b.once(ctx)
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return b, func() { cancel(); <-done }, nil
}
