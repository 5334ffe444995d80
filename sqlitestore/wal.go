package sqlitestore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"sync/atomic"
	"time"
)

// walLimit is the size of the -wal file past which a Store copies its
// commits into the data file and truncates it (a TRUNCATE checkpoint), at
// most once per walCheckInterval, after a commit, and the writer's
// journal_size_limit. SQLite checkpoints on its own every thousand pages or so, but
// cannot reuse or shrink the file while a reader, in any process, holds a
// snapshot older than its end; the file then grows with every commit. The
// checkpoint never waits for such a reader: it fails at once (see
// CheckpointsBlocked), and a later one brings the file back under the limit
// once the reader has let go.
const (
	walLimit         = 64 << 20
	walCheckInterval = time.Second
)

// wal keeps the -wal file under its limit.
type wal struct {
	limit   int64        // walLimit, but in tests
	next    time.Time    // the earliest time of the next look; used only by the batch in flight
	blocked atomic.Int64 // checkpoints that a reader kept from finishing
}

// boundWAL runs a TRUNCATE checkpoint when the -wal file has grown past
// its limit, at most once per walCheckInterval. It runs on the writer's
// connection, after a commit, with the busy timeout off, so that it never
// waits for a reader that holds an old snapshot: when one does, the
// checkpoint does what it can, and the Store counts it as blocked and logs
// it. Nothing it does fails a create.
func (s *Store) boundWAL(ctx context.Context) {
	now := time.Now()
	if now.Before(s.wal.next) {
		return
	}
	s.wal.next = now.Add(walCheckInterval)
	size, err := s.WALSize()
	if err != nil || size <= s.wal.limit {
		return
	}
	ctx = context.WithoutCancel(ctx)
	busy, err := s.checkpoint(ctx)
	switch {
	case err != nil:
		s.opt.Logger.LogAttrs(ctx, slog.LevelWarn, "sqlitestore: checkpoint of the -wal file failed; creates go on",
			slog.String("path", s.file), slog.Int64("wal_bytes", size), slog.Any("error", err))
	case busy:
		s.wal.blocked.Add(1)
		s.opt.Logger.LogAttrs(ctx, slog.LevelWarn, "sqlitestore: the -wal file is past its limit and a reader holds an old snapshot, "+
			"so it cannot be truncated; it grows until that reader ends its transaction",
			slog.String("path", s.file), slog.Int64("wal_bytes", size), slog.Int64("limit", s.wal.limit))
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
func (s *Store) CheckpointsBlocked() int64 { return s.wal.blocked.Load() }
