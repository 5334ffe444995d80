package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"iter"
	"math"
	"time"

	"github.com/petstore-go/petstore/internal/export"
	"github.com/petstore-go/petstore/internal/sqlstore"
)

// A Record is a pet as Export gives it and Import takes it, with the
// idempotency key of the create that stored it while the Store keeps it.
// pgstore takes the same records.
type Record = export.Record

// ErrNotEmpty is wrapped by the error of Import into a Store that holds,
// or has ever held, a pet.
var ErrNotEmpty = errors.New("sqlitestore: the store is not empty")

// idsLeft returns an error wrapping sqlstore.ErrNoIDLeft when the file has
// issued the last ID there is, which AUTOINCREMENT keeps in
// sqlite_sequence: SQLite then fails every insert with SQLITE_FULL, as it
// does on a full disk.
func (s *Store) idsLeft(ctx context.Context) error {
	var last int64
	if err := s.rdb.QueryRowContext(ctx, `SELECT coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'pets'), 0)`).Scan(&last); err != nil {
		return s.readError(ctx, "check", err)
	}
	if last == math.MaxInt64 {
		return fmt.Errorf("sqlitestore: %s: %w", s.file, sqlstore.ErrNoIDLeft)
	}
	return nil
}

// Export returns every pet of the Store in ascending ID order, each with
// its idempotency key while the Store keeps it, read one row at a time from
// one snapshot: pets created meanwhile are left out, and creates go on.
// Stopping the loop early ends the read.
func (s *Store) Export(ctx context.Context) iter.Seq2[Record, error] {
	return func(yield func(Record, error) bool) {
		if s.closed.Load() {
			yield(Record{}, closedError(s.file, "export"))
			return
		}
		// One statement reads from one snapshot, its own read transaction.
		// pet_keys has no index on pet_id: SQLite builds one for the query,
		// in its temporary files, once.
		rows, err := s.rdb.QueryContext(ctx, `SELECT p.id, p.name, p.category_id, coalesce(p.status, ''), coalesce(k.principal, ''), coalesce(k.key, ''), k.created_at
FROM pets p LEFT JOIN pet_keys k ON k.pet_id = p.id AND k.created_at >= ?
ORDER BY p.id`, s.opt.Now().Add(-s.opt.KeyRetention).UnixMilli())
		if err != nil {
			yield(Record{}, s.readError(ctx, "export", err))
			return
		}
		defer rows.Close()
		if err := export.Scan(rows, time.UnixMilli, yield); err != nil {
			yield(Record{}, s.readError(ctx, "export", err))
		}
	}
}

// Import stores the records, in one transaction, in a Store that has never
// held a pet (or fails with an error wrapping ErrNotEmpty), keeping every ID
// and key: a key is forgotten when its retention has passed from KeyCreated,
// by the Store's clock. The IDs must ascend, as Export gives them, and be at
// most 2⁵³−1; a key may be stored at most five minutes in the future of the
// Store's clock. It returns the number of pets stored. When a record is
// invalid, records yields an error, or ctx is done, it stores nothing and
// returns the error, which names the record by its position (1 for the
// first) and ID. It reads one record at a time. Creates wait for it (up to
// the busy timeout of 10 seconds, then petstore.ErrUnavailable): import
// into a store that is not serving.
func (s *Store) Import(ctx context.Context, records iter.Seq2[Record, error]) (int64, error) {
	if s.closed.Load() {
		return 0, closedError(s.file, "import")
	}
	// A connection of its own: the Store's writer belongs to its batches.
	db, err := sql.Open("sqlite", writerDSN(s.file))
	if err != nil {
		return 0, wrapError(ctx, s.file, "import", err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	tx, err := db.BeginTx(ctx, nil) // BEGIN IMMEDIATE: the writer's lock first
	if err != nil {
		return 0, wrapError(ctx, s.file, "import", err)
	}
	defer tx.Rollback() // a no-op after Commit
	var used bool
	if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM pets) OR EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'pets')`).Scan(&used); err != nil {
		return 0, wrapError(ctx, s.file, "import", err)
	}
	if used {
		return 0, fmt.Errorf("sqlitestore: %s: import: %w: import only into a new file", s.file, ErrNotEmpty)
	}
	insertPet, err := tx.PrepareContext(ctx, `INSERT INTO pets (id, name, category_id, status) VALUES (?, ?, ?, NULLIF(?, ''))`)
	if err != nil {
		return 0, wrapError(ctx, s.file, "import", err)
	}
	insertKey, err := tx.PrepareContext(ctx, sqlInsertKey)
	if err != nil {
		return 0, wrapError(ctx, s.file, "import", err)
	}
	var n, last int64
	for r, err := range records {
		if err != nil {
			return 0, err
		}
		n++
		if err := r.Check(last, s.opt.Now()); err != nil {
			return 0, fmt.Errorf("sqlitestore: import: record %d: %w", n, err)
		}
		last = r.ID
		_, err = insertPet.ExecContext(ctx, r.ID, r.Name, r.CategoryID, string(r.Status))
		if err == nil && r.Key != "" {
			_, err = insertKey.ExecContext(ctx, r.Principal, r.Key, r.ID, r.KeyCreated.UnixMilli())
		}
		if err != nil {
			return 0, wrapError(ctx, s.file, fmt.Sprintf("import: record %d (pet %d)", n, r.ID), err)
		}
	}
	if err := tx.Commit(); err != nil {
		return 0, wrapError(ctx, s.file, "import", err)
	}
	return n, nil
}
