package pgstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

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
		return petstore.Pet{}, false, fmt.Errorf("pgstore: add pet: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return petstore.Pet{}, false, fmt.Errorf("pgstore: add pet: %w", err)
	}
	c := &addCall{ctx: ctx, row: addRow{name: p.Name, categoryID: p.CategoryID, status: p.Status}}
	if opts.IdempotencyKey != "" {
		c.row.principal, c.row.key = petstore.Principal(ctx), opts.IdempotencyKey
	}
	if err := s.adds.Send(ctx, c); err != nil {
		return petstore.Pet{}, false, fmt.Errorf("pgstore: add pet: %w", err)
	}
	if c.err != nil {
		if err := ctx.Err(); err != nil && !errors.Is(c.err, err) {
			// The batch failed as this caller's context ended, and the
			// server reported the cancellation (57014) before pgx saw the
			// context: the error still says why, as Store's contract asks.
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

// An addRow is what Add inserts for one pet, and all that a batch keeps
// of it.
type addRow struct {
	name       string
	categoryID int64
	status     petstore.Status
	principal  string // of the key; "" when there is no key
	key        string // the idempotency key; "" for none
}

// newPet returns the pet that r describes.
func (r *addRow) newPet() petstore.NewPet {
	return petstore.NewPet{Name: r.name, CategoryID: r.categoryID, Status: r.status}
}

// An addCall is one call of Add, waiting for its batch.
type addCall struct {
	sqlstore.Call
	ctx context.Context
	row addRow
	// Set by insert.
	id       int64
	replayed bool            // answered with the pet stored first under the key
	stored   petstore.NewPet // the pet stored under the key, when keyed is set
	keyed    bool            // id and stored tell the pet stored under the key
	err      error
	first    *addCall // the call of the same batch that sends this call's key, if another
}

// callContext returns the context of c's call of Add.
func callContext(c *addCall) context.Context { return c.ctx }

// A batchBuf holds the columns of one batch, reused from batch to batch.
type batchBuf struct {
	live                        []*addCall
	names, statuses, principals []string
	keys                        []string
	cats                        []int64
	ids                         []int64
}

// batchBufs holds the batchBufs not in use.
var batchBufs = sync.Pool{New: func() any { return new(batchBuf) }}

// insert inserts the pets of the calls in batch, in one transaction, and
// sets every call's outcome. It never reports a batch in part: the
// transaction either stores every new pet and key or none, and when it
// fails every call gets the same error. A call whose context is already
// done is left out with its context's error. A call whose key is present
// already, or sent by an earlier call of the batch, stores nothing and
// gets the pet stored under it, or ErrIdempotencyKeyReused.
//
// The statement runs under the earliest deadline of the calls, and is
// cancelled when every call's context is done: the batch is then of use to
// no one. insert is the Write of the Store's sqlstore.Queue: once the
// statement has its rows, and so holds the table's lock, it may send the
// next batch to wait there while this one commits (see SendEarly); it
// reports whether the next batch is still to be sent.
func (s *Store) insert(batch []*addCall) (next bool) {
	next = true
	called := false
	pass := func() {
		if !called {
			called = true
			next = !s.adds.SendEarly(len(batch))
		}
	}
	defer s.maybePrune()

	b := batchBufs.Get().(*batchBuf)
	defer batchBufs.Put(b)
	calls := b.live[:0]
	var (
		firsts map[keyID]*addCall
		keyed  bool
	)
	for _, c := range batch {
		if err := c.ctx.Err(); err != nil {
			c.err = fmt.Errorf("pgstore: add pet: %w", err)
			continue
		}
		if c.row.key != "" {
			keyed = true
			if len(batch) > 1 {
				// Within a batch, a key goes to the database once: the
				// calls after the first with it are answered from the
				// first's outcome.
				if firsts == nil {
					firsts = make(map[keyID]*addCall)
				}
				k := keyID{c.row.principal, c.row.key}
				if f := firsts[k]; f != nil {
					c.first = f
					continue
				}
				firsts[k] = c
			}
		}
		calls = append(calls, c)
	}
	b.live = calls
	defer clear(calls)
	if len(calls) == 0 {
		return next
	}
	ctx, cancel := sqlstore.BatchContext(calls, callContext, true)
	defer cancel()

	b.names, b.cats, b.statuses = b.names[:0], b.cats[:0], b.statuses[:0]
	b.principals, b.keys = b.principals[:0], b.keys[:0]
	for _, c := range calls {
		b.names = append(b.names, c.row.name)
		b.cats = append(b.cats, c.row.categoryID)
		b.statuses = append(b.statuses, string(c.row.status))
		if keyed {
			b.principals = append(b.principals, c.row.principal)
			b.keys = append(b.keys, c.row.key)
		}
	}
	var err error
	if keyed {
		err = s.insertKeyed(ctx, b, calls, pass)
	} else {
		b.ids, err = s.insertRows(ctx, b.names, b.cats, b.statuses, b.ids[:0], pass)
		if err == nil {
			for i, c := range calls {
				c.id = b.ids[i]
			}
		}
	}
	clear(b.names) // let the names and keys go
	clear(b.principals)
	clear(b.keys)
	switch {
	case err != nil:
		for _, c := range batch {
			if c.err == nil { // not left out before the statement
				c.err = wrapError(c.ctx, "add pet", noIDLeft(err))
			}
		}
	case firsts != nil:
		for _, c := range batch {
			if c.first != nil {
				c.answerAfter(c.first)
			}
		}
	}
	return next
}

// cancelGrace is how long insertRows waits for the server's answer after
// it has asked the server to cancel the statement, before it gives up on
// the connection: as long as pgx's own cancel-request handler waits by
// default.
const cancelGrace = time.Second

// insertRows runs the Add statement for the rows given as columns and
// appends their IDs to ids, in the order of the rows, under the rule of
// cancellable. It calls passed when the rows arrive, before the commit.
func (s *Store) insertRows(ctx context.Context, names []string, cats []int64, statuses []string, ids []int64, passed func()) ([]int64, error) {
	err := s.cancellable(ctx, func(qctx context.Context, conn *pgxpool.Conn) error {
		var err error
		ids, err = s.queryIDs(qctx, conn, names, cats, statuses, ids, passed)
		return err
	})
	return ids, err
}

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
		// statement ended: it must not cancel whatever the connection runs
		// next.
		<-cancelled
		_ = conn.Hijack().Close(context.WithoutCancel(ctx)) // discarded either way
	}
	// When the rows were committed before the cancel arrived, the callers
	// are told so, even those whose contexts are done.
	return err
}

// queryIDs runs the Add statement on conn and appends the IDs it returns,
// sorted, to ids. It calls passed when the first row arrives: the statement
// has run and holds the lock, and only its commit is left.
func (s *Store) queryIDs(ctx context.Context, conn *pgxpool.Conn, names []string, cats []int64, statuses []string, ids []int64, passed func()) ([]int64, error) {
	rows, err := conn.Query(ctx, s.addSQL, names, cats, statuses, s.relation)
	if err != nil {
		return ids, err
	}
	defer rows.Close()
	var id int64
	dest := [...]any{&id}
	for rows.Next() {
		if err := rows.Scan(dest[:]...); err != nil {
			return ids, err
		}
		if len(ids) == 0 {
			passed()
		}
		ids = append(ids, id)
	}
	// The rows arrive before the commit; only a clean end means that they
	// are committed.
	if err := rows.Err(); err != nil {
		return ids, err
	}
	if len(ids) != len(names) {
		return ids, fmt.Errorf("the insert returned %d IDs for %d pets", len(ids), len(names))
	}
	// The rows drew their IDs in order from an identity column of CACHE 1,
	// so ascending IDs are in the order of the rows, whatever order
	// RETURNING gives them in.
	slices.Sort(ids)
	return ids, nil
}
