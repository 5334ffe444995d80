package pgstore

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/petstore-go/petstore/internal/export"
	"github.com/petstore-go/petstore/internal/sqlstore"
)

// A Record is a pet as Export gives it and Import takes it: the embedded
// petstore.Pet; Principal and Key, the idempotency key of the create that
// stored it and the caller it belongs to, both empty when the Store keeps
// no key for the pet; and KeyCreated, when the key was stored, by the
// Store's clock. sqlitestore takes the same records.
type Record = export.Record

// ErrNotEmpty is wrapped by the error of Import into a table that holds,
// or has ever held, a pet.
var ErrNotEmpty = errors.New("pgstore: the table is not empty")

// importBatch is the number of records that Import sends in one COPY.
const importBatch = 1000

// idsLeft returns an error wrapping sqlstore.ErrNoIDLeft when the table
// holds a pet with the last ID that its identity sequence can issue. It
// reads only what the serving role may read: the pets, and the catalog.
func (s *Store) idsLeft(ctx context.Context) error {
	var full bool
	err := s.pool.QueryRow(ctx, fmt.Sprintf(`SELECT coalesce((SELECT max(id) FROM %s), 0) >= q.seqmax
FROM pg_sequence q WHERE q.seqrelid = pg_get_serial_sequence($1, 'id')::regclass`, s.relation), s.relation).Scan(&full)
	switch {
	case err != nil:
		return wrapError(ctx, "check "+s.relation, err)
	case full:
		return fmt.Errorf("pgstore: %s: %w", s.relation, sqlstore.ErrNoIDLeft)
	}
	return nil
}

// Export returns every pet of the table in ascending ID order, each with
// its idempotency key while the Store keeps it, all read in one REPEATABLE
// READ transaction: pets created meanwhile are left out. Rows arrive one
// at a time, so memory stays flat however many pets there are; Adds go on
// meanwhile. Stopping the loop early ends the read.
func (s *Store) Export(ctx context.Context) iter.Seq2[Record, error] {
	return func(yield func(Record, error) bool) {
		tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
		if err != nil {
			yield(Record{}, wrapError(ctx, "export", err))
			return
		}
		defer tx.Rollback(context.WithoutCancel(ctx))
		rows, _ := tx.Query(ctx, fmt.Sprintf(`SELECT p.id, p.name, p.category_id, coalesce(p.status, ''), coalesce(k.principal, ''), coalesce(k.key, ''), k.created_at
FROM %s p LEFT JOIN %s k ON k.pet_id = p.id AND k.created_at >= $1
ORDER BY p.id`, s.relation, s.keys), s.opt.Now().Add(-s.opt.KeyRetention)) // the error comes back from rows.Err
		defer rows.Close()
		if err := export.Scan(rows, time.Time.UTC, yield); err != nil {
			yield(Record{}, wrapError(ctx, "export", err))
		}
	}
}

// Import stores the records, in one transaction, in a table that has never
// held a pet, keeping every ID and key; each key is forgotten once its
// retention has passed from KeyCreated, by the Store's clock, as it would
// have been in the store it came from. The IDs must ascend, as Export gives
// them, and be at most 2⁵³−1, so that creates after them have IDs left; the
// next pet created gets an ID above every imported one. Keys stored more
// than five minutes in the future of the Store's clock, which would outlive
// their retention, are refused. It returns the number of pets stored. Run
// it as the tables' owner: setting the identity sequence needs UPDATE on it.
//
// Import refuses a table that holds, or has held, a pet, with an error
// wrapping ErrNotEmpty. When a record is invalid, records yields an error,
// or ctx is done, it stores nothing and returns the error, which names the
// record by its position (1 for the first) and ID. It holds at most
// importBatch records in memory; Adds on the table wait for it to finish.
func (s *Store) Import(ctx context.Context, records iter.Seq2[Record, error]) (n int64, err error) {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return 0, wrapError(ctx, "import", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) // after Commit, a no-op
	// The lock that Add takes: no create runs while the table is filled.
	if _, err := tx.Exec(ctx, s.lockSQL, s.relation); err != nil {
		return 0, wrapError(ctx, "import", err)
	}
	var used bool
	if err := tx.QueryRow(ctx, fmt.Sprintf(`SELECT EXISTS (SELECT FROM %s) OR pg_sequence_last_value(pg_get_serial_sequence($1, 'id')) IS NOT NULL`, s.relation), s.relation).Scan(&used); err != nil {
		return 0, wrapError(ctx, "import", err)
	}
	if used {
		return 0, fmt.Errorf("pgstore: import into %s: %w: import only into a new table", s.relation, ErrNotEmpty)
	}
	// COPY writes the identity column as given, as OVERRIDING SYSTEM VALUE
	// does, and NULL for a nil status.
	var pets, keys [][]any
	first := int64(1) // the position of the first record in pets
	flush := func() error {
		if len(pets) == 0 {
			return nil
		}
		what := fmt.Sprintf("records %d to %d (pets %d to %d)", first, n, pets[0][0], pets[len(pets)-1][0])
		if _, err := tx.CopyFrom(ctx, identifier(s.schema, s.table), []string{"id", "name", "category_id", "status"}, pgx.CopyFromRows(pets)); err != nil {
			return wrapError(ctx, "import: "+what, err)
		}
		if _, err := tx.CopyFrom(ctx, identifier(s.schema, s.table+"_keys"), []string{"principal", "key", "pet_id", "created_at"}, pgx.CopyFromRows(keys)); err != nil {
			return wrapError(ctx, "import: the keys of "+what, err)
		}
		pets, keys, first = pets[:0], keys[:0], n+1
		return nil
	}
	var last int64
	for r, err := range records {
		if err != nil {
			return 0, err
		}
		n++
		if err := r.Check(last, s.opt.Now()); err != nil {
			return 0, fmt.Errorf("pgstore: import: record %d: %w", n, err)
		}
		last = r.ID
		var status any
		if r.Status != "" {
			status = string(r.Status)
		}
		pets = append(pets, []any{r.ID, r.Name, r.CategoryID, status})
		if r.Key != "" {
			keys = append(keys, []any{r.Principal, r.Key, r.ID, r.KeyCreated})
		}
		if len(pets) == importBatch {
			if err := flush(); err != nil {
				return 0, err
			}
		}
	}
	if err := flush(); err != nil {
		return 0, err
	}
	if n > 0 {
		if _, err := tx.Exec(ctx, `SELECT setval(pg_get_serial_sequence($1, 'id'), $2)`, s.relation, last); err != nil {
			return 0, wrapError(ctx, "import: set the ID sequence", err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return 0, wrapError(ctx, "import", err)
	}
	return n, nil
}
