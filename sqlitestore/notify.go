package sqlitestore

import (
	"context"
	"database/sql"
	"log/slog"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/petstore-go/petstore"
)

var _ petstore.AddNotifier = (*Store)(nil)

// After a write to the -wal file, a Store asks SQLite every dataVersionPoll
// whether another connection committed, until commitWait has passed since
// the last write: SQLite makes a commit visible only after writing and
// syncing its frames, and the writes of the next commit may arrive while
// the Store waits for one, so finding one commit does not end the wait.
const (
	dataVersionPoll = 5 * time.Millisecond
	commitWait      = time.Second
)

// NotifyAdds calls wake after pets were added to the file, until ctx is
// done (see petstore.AddNotifier). An Add through this Store wakes at once;
// a commit by another Store or process on the file is noticed within
// milliseconds, through the operating system's notifications (inotify,
// kqueue) of writes to the -wal file and PRAGMA data_version, and wakes
// only when it added pets. An idle file costs nothing; where notifications
// cannot be had, the Store asks every 5 ms while any watcher is left.
func (s *Store) NotifyAdds(ctx context.Context, wake func()) {
	s.wakes.Add(ctx, wake, s.watchFile)
}

// watchFile wakes the Store's watchers whenever the file's data_version
// changes, until ctx is done or the Store is closed.
func (s *Store) watchFile(ctx context.Context) {
	warn := func(msg string, err error) {
		s.opt.Logger.LogAttrs(ctx, slog.LevelWarn, "sqlitestore: "+msg, slog.String("path", s.file), slog.String("error", err.Error()))
	}
	db, err := sql.Open("sqlite", readerDSN(s.file))
	if err != nil {
		warn("cannot watch the file for adds", err)
		return
	}
	defer db.Close()
	db.SetMaxOpenConns(1)              // data_version is the connection's own
	qctx := context.WithoutCancel(ctx) // a query is short; no goroutine watches its context
	last, failing := int64(-1), false
	// look wakes for the pets added, if the file's data_version moved since
	// it last looked.
	look := func() {
		var v, id int64
		err := db.QueryRowContext(qctx, "PRAGMA data_version").Scan(&v)
		// The first reading also reads the highest ID: a commit between
		// NotifyAdds and that reading changes no data_version it has seen.
		changed := last < 0 || v != last
		if err == nil && changed {
			err = db.QueryRowContext(qctx, "SELECT coalesce(max(id), 0) FROM pets").Scan(&id)
		}
		switch {
		case err != nil && ctx.Err() == nil && !failing:
			warn("cannot watch the file for adds; watches poll meanwhile", err)
			failing = true
		case err == nil:
			failing = false
			if changed {
				s.wakes.Added(id) // not again for the Store's own adds
			}
			last = v
		}
	}
	look() // opens the -wal file, if no connection has yet

	var writes <-chan fsnotify.Event
	var failed <-chan error
	if w, err := fsnotify.NewWatcher(); err != nil {
		warn("cannot be notified of writes to the file; asking every 5 ms instead", err)
	} else if err := w.Add(s.file + "-wal"); err != nil {
		w.Close()
		warn("cannot be notified of writes to the file; asking every 5 ms instead", err)
	} else {
		defer w.Close()
		writes, failed = w.Events, w.Errors
	}
	t := time.NewTimer(dataVersionPoll)
	defer t.Stop()
	// It asks every dataVersionPoll until then, or always without writes;
	// first for commitWait, for a commit that wrote between the first look
	// and the watch on the -wal file, which sends no notification.
	until := time.Now().Add(commitWait)
	for ctx.Err() == nil && !s.closed.Load() {
		select {
		case <-ctx.Done():
			return
		case <-failed: // events were lost (the kernel's queue overflowed): as for a write
		case ev, ok := <-writes:
			if !ok || ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
				writes = nil // no more notifications: ask every 5 ms
			}
			if until.IsZero() {
				t.Reset(dataVersionPoll)
			}
			until = time.Now().Add(commitWait)
			continue
		case <-t.C:
		}
		look()
		if time.Now().After(until) {
			until = time.Time{}
		}
		if writes == nil || !until.IsZero() {
			t.Reset(dataVersionPoll)
		}
	}
}
