package sqlstore

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"sync"
)

// A Call is embedded in a store's call of Add, so that a Queue knows its
// context and can tell it when its batch has ended.
type Call struct {
	Ctx  context.Context // the call's context, as Send was given it
	done chan struct{}
	err  error // Ctx's error, when it ended before the call's batch was written
}

func (c *Call) call() *Call { return c }

// ErrClosed is returned by Queue.Send once Queue.Close has begun.
var ErrClosed = errors.New("the store is closed")

// A Queue sends concurrent calls of a store's Add to its database together,
// in batches: a commit costs most of what a create costs, and a batch shares
// one among all its calls. A call that finds no batch in flight is written
// at once, alone; calls that arrive meanwhile wait, and the next batch takes
// up to Max of them, in the order they came. There is no timer: a batch is
// whatever queued during the one before, so a lone caller waits for nothing
// but its own commit. A call whose context ends while it waits, until its
// batch is written, leaves the queue with nothing written; after that, it
// waits for the batch's outcome, and Write is to interrupt a batch whose
// every call has given up (see BatchContext).
//
// Max and Write must be set before the first Send.
type Queue[C interface {
	comparable
	call() *Call
}] struct {
	// Max is the most calls that one batch takes.
	Max int
	// Write writes a batch, whose calls' contexts are not done, and sets
	// each call's outcome. It reports whether the next batch is still to be
	// sent, which is false when Write has sent it already with SendEarly.
	Write func(batch []C) (next bool)

	mu      sync.Mutex
	busy    bool // a batch is in flight, or waiting calls are being taken
	closed  bool // Close has begun: no call joins
	waiting []C  // in arrival order; empty unless busy

	wg sync.WaitGroup // the calls of Send, and the goroutines that write queued calls
}

// Send writes c, alone when no batch is in flight and otherwise in a later
// batch, and returns once c has its outcome. It returns ctx's error when
// ctx ended while c was waiting, before its batch was written, and
// ErrClosed once Close has begun; otherwise Write has set c's outcome.
func (q *Queue[C]) Send(ctx context.Context, c C) error {
	c.call().Ctx = ctx
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return ErrClosed
	}
	q.wg.Add(1)
	defer q.wg.Done()
	if !q.busy {
		q.busy = true
		q.mu.Unlock()
		if q.Write([]C{c}) {
			q.SendEarly(0) // the calls that queued meanwhile, if any
		}
		return nil
	}
	done := make(chan struct{})
	c.call().done = done
	q.waiting = append(q.waiting, c)
	q.mu.Unlock()
	select {
	case <-done:
	case <-ctx.Done():
		q.mu.Lock()
		if i := slices.Index(q.waiting, c); i >= 0 {
			q.waiting = slices.Delete(q.waiting, i, i+1)
			q.mu.Unlock()
			return ctx.Err()
		}
		q.mu.Unlock()
		<-done // taken into a batch: it ends soon
	}
	return c.call().err
}

// take returns the next batch of waiting calls when more than over are
// waiting, or Max of them. When none are waiting, it returns nil and, with
// over 0, marks the queue idle.
func (q *Queue[C]) take(over int) []C {
	q.mu.Lock()
	defer q.mu.Unlock()
	n := len(q.waiting)
	if n == 0 && over == 0 {
		q.busy = false
	}
	if n == 0 || (n <= over && n < q.Max) {
		return nil
	}
	n = min(n, q.Max)
	batch := slices.Clone(q.waiting[:n])
	q.waiting = slices.Delete(q.waiting, 0, n)
	return batch
}

// drain writes batch, then the waiting calls, batch after batch, until
// none are waiting or Write has sent the next batch itself. A call whose
// context ended after take took it is released with its error at once.
func (q *Queue[C]) drain(batch []C) {
	for batch != nil {
		live := batch[:0] // in place: batch is drain's own, from take
		for _, c := range batch {
			if err := c.call().Ctx.Err(); err != nil {
				c.call().err = err
				close(c.call().done)
				continue
			}
			live = append(live, c)
		}
		next := len(live) == 0 || q.Write(live)
		for _, c := range live {
			close(c.call().done)
		}
		if !next {
			return
		}
		// Let the callers just released run, and call Add again, before
		// the queue is taken.
		runtime.Gosched()
		batch = q.take(0)
	}
}

// SendEarly is called by Write once the batch of size calls that it writes
// holds the lock that orders the commits, and only its commit is left. When
// more calls wait than the batch holds, or a full batch, it sends them now,
// from a goroutine of its own, so that they wait at the lock while the batch
// commits, and reports true. Otherwise the next batch is sent only once this
// one has committed and its callers have had the chance to call Add again:
// with 8 callers, sending a few at once would make batches alternate between
// a few and the rest, where waiting makes every batch carry all 8.
func (q *Queue[C]) SendEarly(size int) bool {
	batch := q.take(size)
	if batch == nil {
		return false
	}
	q.wg.Go(func() { q.drain(batch) })
	return true
}

// Close stops new calls from joining and waits for those that joined.
func (q *Queue[C]) Close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.wg.Wait()
}

// Waiting returns the number of calls waiting in the queue now, and
// whether a batch is in flight.
func (q *Queue[C]) Waiting() (n int, busy bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.waiting), q.busy
}
