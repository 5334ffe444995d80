package sqlitestore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"time"
)

// walLimit is the writer's journal_size_limit, and the size of the -wal
// file past which a Store runs a TRUNCATE checkpoint after a commit, at most
// once per walCheckInterval. SQLite checkpoints on its own, but cannot reuse
// the file while a reader, in any process, holds an older snapshot; the
// file then grows with every commit, and the checkpoint fails at once
// (CheckpointsBlocked) until the reader lets go.
const (
	walLimit         = 64 << 20
	walCheckInterval = time.Second
)

// boundWAL checkpoints the -wal file when it is past its limit (see
// walLimit), and counts and logs a checkpoint that a reader blocked.
// Nothing it does fails a create.
func (s *Store) boundWAL(ctx context.Context) {
	now := time.Now()
	if now.Before(s.nextWAL) {
		return
	}
	s.nextWAL = now.Add(walCheckInterval)
	size, err := s.WALSize()
	if err != nil || size <= s.walMax {
		return
	}
	ctx = context.WithoutCancel(ctx)
	busy, err := s.checkpoint(ctx)
	switch {
	case err != nil:
		s.opt.Logger.LogAttrs(ctx, slog.LevelWarn, "sqlitestore: checkpoint of the -wal file failed; creates go on",
			slog.String("path", s.file), slog.Int64("wal_bytes", size), slog.Any("error", err))
	case busy:
		s.walBlocked.Add(1)
		s.opt.Logger.LogAttrs(ctx, slog.LevelWarn, "sqlitestore: the -wal file is past its limit and a reader holds an old snapshot, "+
			"so it cannot be truncated; it grows until that reader ends its transaction",
			slog.String("path", s.file), slog.Int64("wal_bytes", size), slog.Int64("limit", s.walMax))
	}
}

// checkpoint runs PRAGMA wal_checkpoint(TRUNCATE) on the writer's
// connection with the busy timeout off, and reports whether a reader or
// writer kept it from finishing.
func (s *Store) checkpoint(ctx context.Context) (busy bool, err error) {
	if _, err := s.w.ExecContext(ctx, "PRAGMA busy_timeout = 0"); err != nil {
		return false, err
	}
	defer func() {
		_, rerr := s.w.ExecContext(ctx, fmt.Sprintf("PRAGMA busy_timeout = %d", busyTimeout.Milliseconds()))
		err = errors.Join(err, rerr)
	}()
	var b, frames, done int64
	if err := s.w.QueryRowContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&b, &frames, &done); err != nil {
		return false, err
	}
	return b != 0, nil
}

// WALSize returns the size in bytes of the Store's -wal file, 0 when there
// is none. It grows past 64 MiB only while a reader, in this process
// or another, holds an old snapshot: a metric of it shows such a reader.
func (s *Store) WALSize() (int64, error) {
	fi, err := os.Stat(s.file + "-wal")
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("sqlitestore: %w", err)
	}
	return fi.Size(), nil
}

// CheckpointsBlocked returns the number of checkpoints, run because the
// -wal file had passed 64 MiB, that could not finish because a reader, in
// this process or another, held an old snapshot: the file then grows with
// every commit until that reader ends its transaction.
func (s *Store) CheckpointsBlocked() int64 { return s.walBlocked.Load() }
