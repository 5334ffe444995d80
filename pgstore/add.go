package pgstore

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/petstore-go/petstore"
)

// Add stores p under a new ID and returns it as stored. An empty Status is
// stored as NULL; a Status other than the three valid ones is refused with
// an error, before the database is asked. So is a name that contains the
// NUL character, which PostgreSQL cannot store in text (the handler refuses
// control characters, so only other callers can meet this). The pet is
// committed, and visible to every Get and List, when Add returns.
//
// Concurrent calls on one Store are committed together, in one statement:
// see the package doc. A call with an idempotency key is committed alone,
// with its key, in a statement of its own. An error means that p was not stored, with one
// exception that no database client can avoid: when the connection breaks
// while the commit is on its way, the pet may have been stored.
func (s *Store) Add(ctx context.Context, p petstore.NewPet, opts petstore.AddOptions) (petstore.Pet, bool, error) {
	if err := p.Validate(); err != nil { // also rejects NUL, which PostgreSQL cannot store
		return petstore.Pet{}, false, fmt.Errorf("pgstore: add pet: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return petstore.Pet{}, false, fmt.Errorf("pgstore: add pet: %w", err)
	}
	if opts.IdempotencyKey != "" {
		return s.addKeyed(ctx, p, petstore.Principal(ctx), opts.IdempotencyKey)
	}
	c := &addCall{ctx: ctx, row: addRow{name: p.Name, categoryID: p.CategoryID, status: p.Status}}
	if !s.adds.join(c) {
		// A batch is in flight: wait for one of the next ones.
		select {
		case <-c.done:
		case <-ctx.Done():
			if s.adds.leave(c) {
				return petstore.Pet{}, false, fmt.Errorf("pgstore: add pet: %w", ctx.Err())
			}
			// Taken into a batch: it ends soon, since a batch whose
			// callers have all given up is cancelled.
			<-c.done
		}
	} else {
		// Nothing in flight: insert p now, alone, and leave whoever
		// arrived meanwhile to a goroutine that inserts them in batches.
		one := [1]*addCall{c}
		s.insert(one[:])
		if s.adds.next() {
			go s.insertQueued()
		}
	}
	if c.err != nil {
		return petstore.Pet{}, false, c.err
	}
	return petstore.Pet{ID: c.id, NewPet: p}, false, nil
}

// An addRow is what Add inserts for one pet, and all that a batch keeps
// of it.
type addRow struct {
	name       string
	categoryID int64
	status     petstore.Status
}

// An addCall is one call of Add, waiting for its batch.
type addCall struct {
	ctx context.Context
	row addRow
	// Set before done is closed.
	id   int64
	err  error
	done chan struct{}
}

// An adder queues concurrent calls of Add so that they are inserted
// together: one statement, one transaction, one commit. At most one batch
// of a Store is in flight at a time. A call that finds none in flight is
// inserted at once, alone; calls that arrive while a batch is in flight
// wait for the next one, and each batch takes up to max of the calls
// waiting, in the order they came.
type adder struct {
	max int

	mu      sync.Mutex
	busy    bool       // a batch is in flight, or waiting calls are being taken
	waiting []*addCall // in arrival order; empty unless busy

	// Used by the one batch in flight, and reused.
	batch    []*addCall
	live     []*addCall
	names    []string
	cats     []int64
	statuses []string
	ids      []int64
}

// join reports whether c may be inserted at once, because no batch is in
// flight; otherwise it queues c for a later batch.
func (a *adder) join(c *addCall) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.busy {
		a.busy = true
		return true
	}
	c.done = make(chan struct{})
	a.waiting = append(a.waiting, c)
	return false
}

// leave takes c out of the queue and reports whether it was still there,
// not yet taken into a batch.
func (a *adder) leave(c *addCall) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	i := slices.Index(a.waiting, c)
	if i < 0 {
		return false
	}
	a.waiting = slices.Delete(a.waiting, i, i+1)
	return true
}

// next reports whether calls are waiting after a batch has ended, and
// otherwise marks the adder idle.
func (a *adder) next() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.waiting) == 0 {
		a.busy = false
		return false
	}
	return true
}

// take returns the next batch of waiting calls, or nil and marks the adder
// idle when none are waiting.
func (a *adder) take() []*addCall {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := min(len(a.waiting), a.max)
	if n == 0 {
		a.busy = false
		return nil
	}
	a.batch = append(a.batch[:0], a.waiting[:n]...)
	a.waiting = slices.Delete(a.waiting, 0, n)
	return a.batch
}

// insertQueued inserts the waiting calls, batch after batch, until none
// are waiting.
func (s *Store) insertQueued() {
	for {
		batch := s.adds.take()
		if batch == nil {
			return
		}
		s.insert(batch)
		for _, c := range batch {
			close(c.done)
		}
		clear(batch)
	}
}

// insert inserts the pets of the calls in batch, in one statement, and sets
// every call's ID or error. It never reports a batch in part: the statement
// either stores every pet or none, and every call gets the same error. A
// call whose context is already done is left out with its context's error.
//
// The statement runs under the earliest deadline of the calls, and is
// cancelled when every call's context is done: the batch is then of use to
// no one.
func (s *Store) insert(batch []*addCall) {
	a := &s.adds
	calls := a.live[:0]
	for _, c := range batch {
		if err := c.ctx.Err(); err != nil {
			c.err = fmt.Errorf("pgstore: add pet: %w", err)
			continue
		}
		calls = append(calls, c)
	}
	a.live = calls
	defer clear(calls)
	if len(calls) == 0 {
		return
	}
	ctx := calls[0].ctx
	if len(calls) > 1 {
		var cancel context.CancelFunc
		ctx, cancel = batchContext(calls)
		defer cancel()
	}

	a.names, a.cats, a.statuses = a.names[:0], a.cats[:0], a.statuses[:0]
	for _, c := range calls {
		a.names = append(a.names, c.row.name)
		a.cats = append(a.cats, c.row.categoryID)
		a.statuses = append(a.statuses, string(c.row.status))
	}
	ids, err := s.insertRows(ctx, a.names, a.cats, a.statuses, a.ids[:0])
	a.ids = ids
	clear(a.names) // let the names go
	for i, c := range calls {
		if err != nil {
			c.err = wrapError(c.ctx, "add pet", err)
		} else {
			c.id = ids[i]
		}
	}
}

// batchContext returns a context for the statement of a batch: it carries
// the values of the first call's context, expires at the earliest deadline
// of the calls, and is cancelled once every call's context is done.
func batchContext(calls []*addCall) (context.Context, context.CancelFunc) {
	var (
		deadline time.Time
		has      bool
	)
	for _, c := range calls {
		if d, ok := c.ctx.Deadline(); ok && (!has || d.Before(deadline)) {
			deadline, has = d, true
		}
	}
	base := context.WithoutCancel(calls[0].ctx)
	var (
		ctx    context.Context
		cancel context.CancelFunc
	)
	if has {
		ctx, cancel = context.WithDeadline(base, deadline)
	} else {
		ctx, cancel = context.WithCancel(base)
	}
	var remaining atomic.Int64
	remaining.Store(int64(len(calls)))
	stops := make([]func() bool, len(calls))
	for i, c := range calls {
		stops[i] = context.AfterFunc(c.ctx, func() {
			if remaining.Add(-1) == 0 {
				cancel()
			}
		})
	}
	return ctx, func() {
		for _, stop := range stops {
			stop()
		}
		cancel()
	}
}

// cancelGrace is how long insertRows waits for the server's answer after
// it has asked the server to cancel the statement, before it gives up on
// the connection: as long as pgx's own cancel-request handler waits by
// default.
const cancelGrace = time.Second

// insertRows runs the Add statement for the rows given as columns and
// appends their IDs to ids, in the order of the rows, under the rule of
// cancellable.
func (s *Store) insertRows(ctx context.Context, names []string, cats []int64, statuses []string, ids []int64) ([]int64, error) {
	err := s.cancellable(ctx, func(qctx context.Context, conn *pgxpool.Conn) error {
		var err error
		ids, err = s.queryIDs(qctx, conn, names, cats, statuses, ids)
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
// sorted, to ids.
func (s *Store) queryIDs(ctx context.Context, conn *pgxpool.Conn, names []string, cats []int64, statuses []string, ids []int64) ([]int64, error) {
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
