package sqlitestore

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
	"time"
)

// backupPrefix and backupSuffix frame the names of scheduled backups.
const (
	backupPrefix = "petstore-"
	backupSuffix = ".db"
)

// Backups are the backups that Store.ScheduleBackups takes. Their methods
// are safe for concurrent use.
type Backups struct {
	src, dir string
	keep     int
	logger   *slog.Logger
	stop     func()

	lastOK    atomic.Int64 // Unix nanoseconds of the last success, 0 before the first
	successes atomic.Int64
	failures  atomic.Int64
}

// BackupStats counts the outcomes of scheduled backups.
type BackupStats struct {
	Successes, Failures int64
	LastSuccess         time.Time // the zero Time before the first
}

// ScheduleBackups backs the data file up into dir at once and then every
// interval, until Stop, each time as Backup does, into a file named by the
// time (petstore-20260102T150405.000Z.db, so that the names sort by age),
// and then removes all but the newest keep of them. It logs each outcome
// with WithLogger's logger: a success at info level, a failure, counted in
// Stats, at error level.
//
// It makes dir when missing, owner-only, and refuses, then and before each
// backup, a dir that another user could write and so replace a backup in:
// a symbolic link, a directory owned by another user, or one that the
// group or others may write.
func (s *Store) ScheduleBackups(dir string, interval time.Duration, keep int) (*Backups, error) {
	switch {
	case interval <= 0:
		return nil, fmt.Errorf("sqlitestore.ScheduleBackups: interval %v: want more than 0", interval)
	case keep < 1:
		return nil, fmt.Errorf("sqlitestore.ScheduleBackups: keep %d: want 1 or more", keep)
	}
	err := os.MkdirAll(dir, 0o700)
	if err == nil {
		dir, err = filepath.Abs(dir)
	}
	if err == nil {
		err = checkBackupDir(dir)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlitestore.ScheduleBackups: %w", err)
	}
	b := &Backups{src: s.file, dir: dir, keep: keep, logger: s.opt.Logger}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	b.stop = func() { cancel(); <-done }
	s.opt.Logger.Info("sqlitestore: backing up the data file on a schedule", "dir", dir, "interval", interval, "keep", keep)
	go func() {
		defer close(done)
		tick := time.NewTicker(interval)
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
	return b, nil
}

// Stop stops the backups, waiting for one in progress to stop; it leaves
// no partial file.
func (b *Backups) Stop() { b.stop() }

// Stats returns the outcomes of the backups so far.
func (b *Backups) Stats() BackupStats {
	st := BackupStats{Successes: b.successes.Load(), Failures: b.failures.Load()}
	if ns := b.lastOK.Load(); ns != 0 {
		st.LastSuccess = time.Unix(0, ns)
	}
	return st
}

// checkBackupDir refuses a backup directory in which another user could
// replace a backup.
func checkBackupDir(dir string) error {
	fi, err := os.Lstat(dir)
	switch {
	case err != nil:
		return err
	case !fi.IsDir() && fi.Mode()&fs.ModeSymlink == 0:
		return fmt.Errorf("%s is not a directory", dir)
	}
	return checkOwner(dir, fi, "give the path of the directory itself",
		"replace the backups; chown it, or give a directory of your own",
		"replace the backups; make it owner-only: chmod 700")
}

// once takes one backup and removes those past the number to keep.
func (b *Backups) once(ctx context.Context) {
	name := filepath.Join(b.dir, backupPrefix+time.Now().UTC().Format("20060102T150405.000Z")+backupSuffix)
	err := checkBackupDir(b.dir)
	var info BackupInfo
	if err == nil {
		info, err = Backup(ctx, b.src, name)
	}
	if err != nil {
		if ctx.Err() != nil {
			return // stopping
		}
		b.logger.Error("sqlitestore: scheduled backup failed", "path", name, "err", err, "failures", b.failures.Add(1))
		return
	}
	b.successes.Add(1)
	b.lastOK.Store(time.Now().UnixNano())
	b.logger.Info("sqlitestore: backed up", "path", info.Path, "pets", info.Pets, "bytes", info.Bytes, "took", info.Duration.Round(time.Millisecond))
	if err := b.prune(); err != nil {
		b.logger.Warn("sqlitestore: removing old backups", "dir", b.dir, "err", err)
	}
}

// prune removes all but the newest b.keep backups of the directory.
func (b *Backups) prune() error {
	entries, err := os.ReadDir(b.dir) // sorted by name, so the oldest first
	if err != nil {
		return err
	}
	entries = slices.DeleteFunc(entries, func(e os.DirEntry) bool {
		n := e.Name()
		return !strings.HasPrefix(n, backupPrefix) || !strings.HasSuffix(n, backupSuffix) || !e.Type().IsRegular()
	})
	var errs []error
	for _, e := range entries[:max(0, len(entries)-b.keep)] {
		errs = append(errs, os.Remove(filepath.Join(b.dir, e.Name())))
	}
	return errors.Join(errs...)
}
