package pgstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/internal/sqlstore"
)

// Add stores p under a new ID and returns it as stored. An empty Status is
// stored as NULL; a Status other than the three valid ones is refused with
// an error, before the database is asked. So is a name that contains the
// NUL character, which PostgreSQL cannot store in text (the handler refuses
// control characters, so only other callers can meet this). The pet is
// committed, and visible to every Get and List, when Add returns.
//
// With opts.IdempotencyKey set, the key is stored in the same transaction
// as the pet, scoped by petstore.Principal(ctx), and a later Add with it is
// answered as the petstore.Store doc says: see the package doc.
//
// Concurrent calls on one Store, with keys or without, are committed
// together, in one transaction: see the package doc. An error means that p
// was not stored, with one exception that no database client can avoid:
// when the connection breaks while the commit is on its way, the pet may
// have been stored.
func (s *Store) Add(ctx context.Context, p petstore.NewPet, opts petstore.AddOptions) (petstore.Pet, bool, error) {
	if err := p.Validate(); err != nil { // also rejects NUL, which PostgreSQL cannot store
		return petstore.Pet{}, false, addError(err)
	}
	if err := ctx.Err(); err != nil {
		return petstore.Pet{}, false, addError(err)
	}
	c := &addCall{ctx: ctx, pet: p}
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
	if s.replicas != nil {
		s.replicas.wrote(c.id)
	}
	s.notify.wakes.AddedHere(c.id)
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
	ctx context.Context
	pet petstore.NewPet
	key keyID
	// Set by insert.
	id       int64
	replayed bool            // answered with the pet stored first under the key
	stored   petstore.NewPet // the pet stored under the key, when keyed is set
	keyed    bool            // id and stored tell the pet stored under the key
	err      error
	first    *addCall // the call of the same batch that sends this call's key, if another
}

// insert inserts the pets of the calls in batch, in one transaction, and
// sets every call's outcome: the transaction stores every new pet and key
// or none, and when it fails every call gets its error. A call whose
// context is already done is left out with its context's error. A call
// whose key is stored already, or sent by an earlier call of the batch,
// stores nothing and gets the pet stored under it, or
// ErrIdempotencyKeyReused.
//
// The statement runs under the earliest deadline of the calls, and is
// cancelled when every call's context is done. insert is the Write of the
// Store's sqlstore.Queue: once the statement holds the table's lock, it may
// send the next batch to wait there while this one commits (see SendEarly);
// it reports whether the next batch is still to be sent.
func (s *Store) insert(batch []*addCall) (next bool) {
	next = true
	passed := func() { next = !s.adds.SendEarly(len(batch)) }
	defer s.maybePrune()
	var (
		calls  []*addCall
		firsts map[keyID]*addCall // within a batch, a key goes to the database once
		keyed  bool
	)
	for _, c := range batch {
		if err := c.ctx.Err(); err != nil {
			c.err = addError(err)
			continue
		}
		if c.key != (keyID{}) {
			keyed = true
			if f := firsts[c.key]; f != nil {
				c.first = f
				continue
			}
			if firsts == nil {
				firsts = make(map[keyID]*addCall)
			}
			firsts[c.key] = c
		}
		calls = append(calls, c)
	}
	if len(calls) == 0 {
		return next
	}
	ctx, cancel := sqlstore.BatchContext(calls, func(c *addCall) context.Context { return c.ctx }, true)
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
		if keyed {
			return s.insertKeyed(ctx, conn, calls, passed, names, cats, statuses, principals, keys)
		}
		return s.insertRows(ctx, conn, calls, passed, names, cats, statuses)
	})
	for _, c := range batch {
		switch {
		case err != nil && c.err == nil: // not left out before the statement
			c.err = wrapError(c.ctx, "add pet", noIDLeft(err))
		case err == nil && c.first != nil:
			c.answerAfter(c.first)
		}
	}
	return next
}

// cancelGrace is how long cancellable waits for the server's answer after
// it has asked the server to cancel the statement, before it gives up on
// the connection: as long as pgx's own cancel-request handler waits.
const cancelGrace = time.Second

// cancellable runs write on a connection of the pool. When ctx is done, the
// server is asked to cancel the statement, and the outcome that cancellable
// reports is the server's: an error if the statement was cancelled, write's
// result if it was too late and its rows are committed. (pgx would, by
// default, only drop the connection: the server would go on waiting for the
// lock and store the rows of callers that were told that it had failed.)
// Only a connection that breaks, or a server that does not answer within
// cancelGrace, leaves the outcome unknown.
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
// give, and sets their IDs. It calls passed when the first row arrives:
// the statement holds the lock, and only its commit is left.
func (s *Store) insertRows(ctx context.Context, conn *pgxpool.Conn, calls []*addCall, passed func(), names []string, cats []int64, statuses []string) error {
	rows, err := conn.Query(ctx, s.addSQL, names, cats, statuses, s.relation)
	if err != nil {
		return err
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return err
		}
		if len(ids) == 0 {
			passed()
		}
		ids = append(ids, id)
	}
	// The rows arrive before the commit; only a clean end means that they
	// are committed.
	if err := rows.Err(); err != nil {
		return err
	}
	if len(ids) != len(calls) {
		return fmt.Errorf("the insert returned %d IDs for %d pets", len(ids), len(calls))
	}
	// The rows drew their IDs in order from an identity column of CACHE 1,
	// so ascending IDs are in the order of the rows, whatever order
	// RETURNING gives them in.
	slices.Sort(ids)
	for i, c := range calls {
		c.id = ids[i]
	}
	return nil
}

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
// lock fails that batch with a unique violation instead. A key already
// stored answers only its own call: the batch's other pets are stored.
func (s *Store) insertKeyed(ctx context.Context, conn *pgxpool.Conn, calls []*addCall, passed func(), names []string, cats []int64, statuses, principals, keys []string) error {
	batch := &pgx.Batch{}
	batch.Queue(s.lockSQL, s.relation)
	if c := calls[0]; len(calls) == 1 {
		batch.Queue(s.addKeyedOneSQL, c.pet.Name, c.pet.CategoryID, string(c.pet.Status), c.key.principal, c.key.key, s.now())
	} else {
		batch.Queue(s.addKeyedSQL, names, cats, statuses, principals, keys, s.now())
	}
	results := conn.SendBatch(ctx, batch)
	err := readKeyed(results, calls, passed)
	// Closing reads to the end of the transaction: only a clean end means
	// that it is committed.
	if cerr := results.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		for _, c := range calls {
			c.id, c.replayed, c.keyed, c.err = 0, false, false, nil
		}
	}
	return err
}

// readKeyed reads the outcome of each call from the results of the keyed
// batch.
func readKeyed(results pgx.BatchResults, calls []*addCall, passed func()) error {
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
		got     int
	)
	for rows.Next() {
		if err := rows.Scan(&n, &id, &existed, &stored.Name, &stored.CategoryID, &stored.Status); err != nil {
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
		c.id, c.keyed, c.stored = id, c.key != (keyID{}), c.pet
		switch {
		case !existed:
		case stored == c.pet:
			c.replayed = true
		default:
			c.stored, c.err = stored, addError(petstore.ErrIdempotencyKeyReused)
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
		c.err = addError(errors.New("the call with the same key has no outcome"))
	case first.stored == c.pet:
		c.id, c.stored, c.replayed = first.id, first.stored, true
	default:
		c.err = addError(petstore.ErrIdempotencyKeyReused)
	}
}
