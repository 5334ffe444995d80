package sqlitestore

import (
	"context"
	"database/sql"
	"log/slog"
	"time"

	"github.com/petstore-go/petstore"
)

var _ petstore.AddNotifier = (*Store)(nil)

// dataVersionPoll is how often a Store with watchers asks SQLite whether
// another connection, in this process or another, committed to the file.
const dataVersionPoll = 10 * time.Millisecond

// NotifyAdds calls wake after pets were added to the file, until ctx is
// done (see petstore.AddNotifier). An Add through this Store wakes at once;
// a commit by another Store or process on the same file is noticed within
// a few milliseconds, by PRAGMA data_version on a connection of its own,
// which the Store opens while any watcher is left and which costs one small
// read every 10 ms, and a read of the highest ID after each commit: a commit
// wakes only when it added pets that the Store has not woken for yet.
func (s *Store) NotifyAdds(ctx context.Context, wake func()) {
	s.wakes.Add(ctx, wake, s.watchFile)
}

// watchFile wakes the Store's watchers whenever the file's data_version
// changes, until ctx is done or the Store is closed.
func (s *Store) watchFile(ctx context.Context) {
	db, err := sql.Open("sqlite", readerDSN(s.file))
	if err != nil {
		s.logger.LogAttrs(ctx, slog.LevelWarn, "sqlitestore: cannot watch the file for adds", slog.String("path", s.file), slog.String("error", err.Error()))
		return
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	version, err := db.PrepareContext(ctx, "PRAGMA data_version")
	if err != nil {
		s.logger.LogAttrs(ctx, slog.LevelWarn, "sqlitestore: cannot watch the file for adds", slog.String("path", s.file), slog.String("error", err.Error()))
		return
	}
	defer version.Close()
	t := time.NewTicker(dataVersionPoll)
	defer t.Stop()
	qctx := context.WithoutCancel(ctx) // a query is short; no goroutine watches its context
	last, failing := int64(-1), false
	for ctx.Err() == nil && !s.closed.Load() {
		var v, id int64
		err := version.QueryRowContext(qctx).Scan(&v)
		// The first reading also reads the highest ID: a commit between
		// NotifyAdds and that reading changes no data_version it has seen.
		changed := last < 0 || v != last
		if err == nil && changed {
			err = db.QueryRowContext(qctx, "SELECT coalesce(max(id), 0) FROM pets").Scan(&id)
		}
		switch {
		case err != nil && ctx.Err() == nil && !failing:
			s.logger.LogAttrs(ctx, slog.LevelWarn, "sqlitestore: cannot watch the file for adds; watches poll meanwhile",
				slog.String("path", s.file), slog.String("error", err.Error()))
			failing = true
		case err == nil:
			failing = false
			if changed {
				s.wakes.Added(id) // not again for the Store's own adds
			}
			last = v
		}
		select {
		case <-ctx.Done():
		case <-t.C:
		}
	}
}
