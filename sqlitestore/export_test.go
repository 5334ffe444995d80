package sqlitestore

import (
	"context"
	"fmt"
	"time"
)

// Commits returns the number of write transactions that Add committed.
func Commits(s *Store) int64 { return s.commits.Load() }

// Waiting returns the number of calls of Add waiting in the queue now.
func Waiting(s *Store) int {
	n, _ := s.adds.Waiting()
	return n
}

// Busy reports whether a batch is in flight.
func Busy(s *Store) bool {
	_, busy := s.adds.Waiting()
	return busy
}

// SetMaxPageCount caps the size of the file, as seen by the writer, at n
// pages (0: at its size now), so that a write that needs more fails with
// SQLITE_FULL, as on a full disk. It must be called while no Add runs.
func SetMaxPageCount(s *Store, n int64) error {
	ctx := context.Background()
	if n == 0 {
		if err := s.w.QueryRowContext(ctx, "PRAGMA page_count").Scan(&n); err != nil {
			return err
		}
	}
	var got int64
	if err := s.w.QueryRowContext(ctx, fmt.Sprintf("PRAGMA max_page_count = %d", n)).Scan(&got); err != nil {
		return err
	}
	if got != n {
		return fmt.Errorf("max_page_count is %d, not %d", got, n)
	}
	return nil
}

// SetWALLimit sets the size of the -wal file past which s checkpoints it,
// walLimit in a Store that serves. It must be called while no Add runs.
func SetWALLimit(s *Store, bytes int64) { s.walMax = bytes }

// WriterDSN and ReaderDSN are the data source names of the Store's
// connections to a file, pragmas included.
var (
	WriterDSN = writerDSN
	ReaderDSN = readerDSN
)

// SetBusyTimeout sets the busy timeout of the writer's connection, so that
// a test need not wait the default. It must be called while no Add runs.
func SetBusyTimeout(s *Store, d time.Duration) error {
	_, err := s.w.ExecContext(context.Background(), fmt.Sprintf("PRAGMA busy_timeout = %d", d.Milliseconds()))
	return err
}

// Statements are the Store's statements by name.
var Statements = map[string]string{
	"insert pet":     sqlInsertPet,
	"insert key":     sqlInsertKey,
	"look up key":    sqlLookupKey,
	"delete key":     sqlDeleteKey,
	"prune keys":     sqlPruneKeys,
	"get":            sqlGet,
	"list":           sqlList,
	"list by status": sqlListStatus,
}
