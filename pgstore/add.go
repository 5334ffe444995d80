package pgstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/internal/sqlstore"
)

// Add stores p under a new ID and returns it as stored, committed and
// visible to every Get and List. An empty Status is stored as NULL; a pet
// that NewPet.Validate refuses (such as a name with NUL, which PostgreSQL
// cannot store) is refused before the database is asked. With
// opts.IdempotencyKey, the key is stored in the same transaction as the
// pet, scoped by petstore.Principal(ctx), and answers later Adds as the
// petstore.Store doc says. Concurrent calls are committed together (see the
// package doc). An error means that p was not stored, unless the
// connection broke while the commit was on its way.
func (s *Store) Add(ctx context.Context, p petstore.NewPet, opts petstore.AddOptions) (petstore.Pet, bool, error) {
	if err := cmp.Or(p.Validate(), ctx.Err()); err != nil {
		return petstore.Pet{}, false, addError(err)
	}
	c := &addCall{pet: p}
	if opts.IdempotencyKey != "" {
		c.key = keyID{petstore.Principal(ctx), opts.IdempotencyKey}
	}
	if err := s.adds.Send(ctx, c); err != nil {
		return petstore.Pet{}, false, addError(err)
	}
	if c.err != nil {
		if err := ctx.Err(); err != nil && !errors.Is(c.err, err) {
			// The server reported the cancellation (57014) before pgx saw
			// the context: the error still says why, as Store's contract asks.
			return petstore.Pet{}, false, fmt.Errorf("%w: %w", err, c.err)
		}
		return petstore.Pet{}, false, c.err
	}
	s.replicas.wrote(c.id)
	s.wakes.AddedHere(c.id)
	if c.replayed {
		return petstore.Pet{ID: c.id, NewPet: c.stored}, true, nil
	}
	return petstore.Pet{ID: c.id, NewPet: p}, false, nil
}

// addError is the error of Add for err.
func addError(err error) error { return fmt.Errorf("pgstore: add pet: %w", err) }

// A keyID is an idempotency key in the scope of its principal; the zero
// keyID is no key.
type keyID struct{ principal, key string }

// An addCall is one call of Add, waiting for its batch.
type addCall struct {
	sqlstore.Call
	pet petstore.NewPet
	key keyID
	// Set by insert.
	id       int64
	replayed bool            // answered with the pet stored first under the key
	stored   petstore.NewPet // with a key, the pet stored under it
	err      error
	first    *addCall // the call of the same batch that sends this call's key, if another
}

// insert is the Write of the Store's sqlstore.Queue: it inserts the pets of
// the calls in batch in one transaction, under the earliest deadline of the
// calls and until every call's context is done, and sets every call's
// outcome (see insertKeyed); when it fails every call gets its error. Once
// the statement holds the table's lock, insert may send the next batch to
// wait there (see SendEarly); it reports whether the next batch is still to
// be sent.
func (s *Store) insert(batch []*addCall) (next bool) {
	next = true
	passed := func() { next = !s.adds.SendEarly(len(batch)) }
	defer s.maybePrune()
	var calls []*addCall
	firsts := map[keyID]*addCall{} // within a batch, a key goes to the database once
	for _, c := range batch {
		if c.key != (keyID{}) {
			if f := firsts[c.key]; f != nil {
				c.first = f
				continue
			}
			firsts[c.key] = c
		}
		calls = append(calls, c)
	}
	ctx, cancel := sqlstore.BatchContext(calls, true)
	defer cancel()
	var names, statuses, principals, keys []string
	var cats []int64
	for _, c := range calls {
		names = append(names, c.pet.Name)
		cats = append(cats, c.pet.CategoryID)
		statuses = append(statuses, string(c.pet.Status))
		principals = append(principals, c.key.principal)
		keys = append(keys, c.key.key)
	}
	err := s.cancellable(ctx, func(ctx context.Context, conn *pgxpool.Conn) error {
		if len(firsts) > 0 {
			return s.insertKeyed(ctx, conn, calls, passed, names, cats, statuses, principals, keys)
		}
		return s.insertRows(ctx, conn, calls, passed, names, cats, statuses)
	})
	// 2200H, sequence_generator_limit_exceeded: the identity sequence has
	// issued its last value.
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "2200H" {
		err = fmt.Errorf("%w (%v)", sqlstore.ErrNoIDLeft, err)
	}
	for _, c := range batch {
		switch {
		case err != nil:
			c.err = wrapError(c.Ctx, "add pet", err)
		case c.first != nil && c.first.stored == c.pet: // c's key went with c.first's pet
			c.id, c.stored, c.replayed = c.first.id, c.first.stored, true
		case c.first != nil:
			c.err = addError(petstore.ErrIdempotencyKeyReused)
		}
	}
	return next
}

// cancelGrace is how long cancellable waits for the server's answer to a
// cancel request before it gives up on the connection, as pgx does.
const cancelGrace = time.Second

// cancellable runs write on a connection of the pool. When ctx is done, the
// server is asked to cancel the statement, and cancellable reports the
// server's outcome: an error if the statement was cancelled, write's result
// if its rows were committed first. (pgx would only drop the connection,
// and the server would go on to store the rows of callers told that it
// failed.) Only a broken connection, or no answer within cancelGrace,
// leaves the outcome unknown.
func (s *Store) cancellable(ctx context.Context, write func(qctx context.Context, conn *pgxpool.Conn) error) error {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	qctx, qcancel := context.WithCancel(context.WithoutCancel(ctx))
	defer qcancel()
	cancelled := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(cancelled)
		cctx, ccancel := context.WithTimeout(qctx, cancelGrace)
		defer ccancel()
		if conn.Conn().PgConn().CancelRequest(cctx) != nil {
			qcancel()
			return
		}
		time.AfterFunc(cancelGrace, qcancel)
	})
	err = write(qctx, conn)
	if !stop() {
		// A cancel request went out, and might reach the server after the
		// statement ended: it must not cancel what the connection runs next.
		<-cancelled
		_ = conn.Hijack().Close(context.WithoutCancel(ctx)) // discarded either way
	}
	return err
}

// insertRows runs the Add statement for calls, whose pets the columns
// give, and sets their IDs. It calls passed when the first row arrives.
func (s *Store) insertRows(ctx context.Context, conn *pgxpool.Conn, calls []*addCall, passed func(), names []string, cats []int64, statuses []string) error {
	rows, _ := conn.Query(ctx, s.addSQL, names, cats, statuses, s.relation) // the error comes back from ForEachRow
	var id int64
	var ids []int64
	// The rows arrive before the commit; only a clean end means that they
	// are committed.
	if _, err := pgx.ForEachRow(rows, []any{&id}, func() error {
		if len(ids) == 0 {
			passed()
		}
		ids = append(ids, id)
		return nil
	}); err != nil {
		return err
	}
	if len(ids) != len(calls) {
		return fmt.Errorf("the insert returned %d IDs for %d pets", len(ids), len(calls))
	}
	// The rows drew their IDs in order (the identity column has CACHE 1),
	// whatever order RETURNING gives them in.
	slices.Sort(ids)
	for i, c := range calls {
		c.id = ids[i]
	}
	return nil
}

// insertKeyed inserts a batch in which some calls carry keys, distinct
// within the batch, and sets the outcome of every call: its new pet, or the
// pet stored under its key before, replayed, or ErrIdempotencyKeyReused
// (the batch's other pets are stored). When the transaction fails it
// returns the error and sets nothing. It calls passed when the rows arrive.
//
// The lock and the rows are two statements of one implicit transaction,
// sent at once: the second's snapshot is taken once the lock is held, so
// it sees every key committed by an earlier Add, and none is in progress
// (ErrIdempotencyKeyInUse never occurs). This relies on READ COMMITTED,
// PostgreSQL's default: under REPEATABLE READ, a key committed while a
// batch waits at the lock fails the batch with a unique violation.
func (s *Store) insertKeyed(ctx context.Context, conn *pgxpool.Conn, calls []*addCall, passed func(), names []string, cats []int64, statuses, principals, keys []string) error {
	batch := &pgx.Batch{}
	batch.Queue(s.lockSQL, s.relation)
	if c := calls[0]; len(calls) == 1 {
		batch.Queue(s.addKeyedOneSQL, c.pet.Name, c.pet.CategoryID, string(c.pet.Status), c.key.principal, c.key.key, s.opt.Now())
	} else {
		batch.Queue(s.addKeyedSQL, names, cats, statuses, principals, keys, s.opt.Now())
	}
	results := conn.SendBatch(ctx, batch)
	_, err := results.Exec() // the lock
	got := 0
	if err == nil {
		var (
			n, id   int64
			existed bool
			stored  petstore.NewPet
		)
		rows, _ := results.Query() // the error comes back from ForEachRow
		_, err = pgx.ForEachRow(rows, []any{&n, &id, &existed, &stored.Name, &stored.CategoryID, &stored.Status}, func() error {
			if got == 0 {
				passed()
			}
			if n != int64(got+1) || got >= len(calls) {
				return fmt.Errorf("the keyed insert returned row %d as row %d of %d", n, got+1, len(calls))
			}
			c := calls[got]
			got++
			c.id, c.stored = id, c.pet
			switch {
			case !existed:
			case stored == c.pet:
				c.replayed = true
			default:
				c.stored, c.err = stored, addError(petstore.ErrIdempotencyKeyReused)
			}
			return nil
		})
	}
	if err == nil && got != len(calls) {
		err = fmt.Errorf("the keyed insert returned %d rows for %d pets", got, len(calls))
	}
	// Closing reads to the end of the transaction: only a clean end means
	// that it is committed.
	if cerr := results.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		for _, c := range calls {
			c.err = nil // insert gives every call the batch's error
		}
	}
	return err
}
