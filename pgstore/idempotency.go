package pgstore

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/petstore-go/petstore"
)

// A keyID is an idempotency key in the scope of its principal.
type keyID struct{ principal, key string }

// insertKeyed inserts a batch in which some calls carry idempotency keys,
// distinct within the batch, and sets the outcome of every call: its new
// pet, or the pet stored under its key before, replayed, or
// ErrIdempotencyKeyReused. It returns an error, and sets nothing, when the
// transaction failed. It calls passed when the rows arrive, before the
// commit.
//
// The lock and the rows are two statements of one implicit transaction,
// sent at once: the second statement's snapshot is taken when the lock is
// held, so that every key committed by an earlier Add is seen, and none
// can be in progress; a second Add with a key waits at the lock and then
// finds it, so ErrIdempotencyKeyInUse never occurs. This relies on READ
// COMMITTED, PostgreSQL's default: under a role whose default isolation is
// REPEATABLE READ or stricter, a key committed while a batch waits at the
// lock fails that batch with a unique violation instead. Within a batch a
// key is sent once, with the first call that has it; later calls with it
// get that call's pet, replayed, or ErrIdempotencyKeyReused. A key already
// stored answers only its own call: the batch's other pets are stored.
func (s *Store) insertKeyed(ctx context.Context, b *batchBuf, calls []*addCall, passed func()) error {
	return s.cancellable(ctx, func(qctx context.Context, conn *pgxpool.Conn) error {
		batch := &pgx.Batch{}
		batch.Queue(s.lockSQL, s.relation)
		if len(calls) == 1 {
			r := &calls[0].row
			batch.Queue(s.addKeyedOneSQL, r.name, r.categoryID, string(r.status), r.principal, r.key, s.now())
		} else {
			batch.Queue(s.addKeyedSQL, b.names, b.cats, b.statuses, b.principals, b.keys, s.now())
		}
		results := conn.SendBatch(qctx, batch)
		err := s.readKeyed(results, calls, passed)
		// Closing reads to the end of the transaction: only a clean end
		// means that it is committed.
		if cerr := results.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			for _, c := range calls {
				c.id, c.replayed, c.keyed, c.err = 0, false, false, nil
			}
		}
		return err
	})
}

// readKeyed reads the outcome of each call from the results of the keyed
// batch.
func (s *Store) readKeyed(results pgx.BatchResults, calls []*addCall, passed func()) error {
	if _, err := results.Exec(); err != nil {
		return err
	}
	rows, err := results.Query()
	if err != nil {
		return err
	}
	defer rows.Close()
	var (
		n, id   int64
		existed bool
		stored  petstore.NewPet
		status  string
		got     int
	)
	dest := [...]any{&n, &id, &existed, &stored.Name, &stored.CategoryID, &status}
	for rows.Next() {
		if err := rows.Scan(dest[:]...); err != nil {
			return err
		}
		if got == 0 {
			passed()
		}
		if n != int64(got+1) || got >= len(calls) {
			return fmt.Errorf("the keyed insert returned row %d as row %d of %d", n, got+1, len(calls))
		}
		c := calls[got]
		got++
		c.id, c.keyed = id, c.row.key != ""
		if !existed {
			c.stored = c.row.newPet()
			continue
		}
		stored.Status = petstore.Status(status)
		c.stored = stored
		if c.stored == c.row.newPet() {
			c.replayed = true
		} else {
			c.err = fmt.Errorf("pgstore: add pet: %w", petstore.ErrIdempotencyKeyReused)
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if got != len(calls) {
		return fmt.Errorf("the keyed insert returned %d rows for %d pets", got, len(calls))
	}
	return nil
}

// answerAfter sets the outcome of c, whose key an earlier call of the same
// batch, first, sent and the batch stored: the pet stored under the key,
// replayed when c asks for the same pet, or ErrIdempotencyKeyReused.
func (c *addCall) answerAfter(first *addCall) {
	switch {
	case !first.keyed:
		c.err = fmt.Errorf("pgstore: add pet: the call with the same key has no outcome")
	case first.stored == c.row.newPet():
		c.id, c.stored, c.replayed = first.id, first.stored, true
	default:
		c.err = fmt.Errorf("pgstore: add pet: %w", petstore.ErrIdempotencyKeyReused)
	}
}
