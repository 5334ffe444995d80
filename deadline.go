package petstore

import (
	"context"
	"sync"
	"time"
)

// storeCtx is the context of one store call, made for that call and never
// reused: its parent's values (the context that the Authenticator
// returned), its parent's cancellation unless detached, and the store
// deadline. A Store may keep it after the call: it then reads as a context
// that was cancelled when the call returned, with the same values.
//
// context.WithTimeout would do, but it starts a timer and registers with its
// parent on every call, which costs four allocations and about half a
// microsecond per request; a store that only asks Err, as memstore does,
// needs neither. storeCtx makes the channel and the timer only when a store
// asks for Done, and otherwise compares the clock with the deadline when
// Err is called. BENCHMARKS.md gives the same-run figure.
type storeCtx struct {
	context.Context // the parent, for its values (and its cancellation)

	deadline time.Time
	detached bool // the parent's cancellation does not reach this context

	mu   sync.Mutex
	err  error
	done chan struct{} // made by Done
	stop func()        // stops what Done started: the timer and the watch on the parent
}

// withStoreDeadline returns a new storeCtx over parent with the deadline d
// from now. With detached, the parent's cancellation and deadline do not
// apply. The caller calls release once the store call has returned.
func withStoreDeadline(parent context.Context, d time.Duration, detached bool) *storeCtx {
	return &storeCtx{Context: parent, deadline: time.Now().Add(d), detached: detached}
}

func (c *storeCtx) Deadline() (time.Time, bool) {
	if !c.detached {
		if d, ok := c.Context.Deadline(); ok && d.Before(c.deadline) {
			return d, true
		}
	}
	return c.deadline, true
}

func (c *storeCtx) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil {
		var err error
		if !c.detached {
			err = c.Context.Err()
		}
		if err == nil && time.Until(c.deadline) <= 0 { // reads only the monotonic clock
			err = context.DeadlineExceeded
		}
		c.endLocked(err)
	}
	return c.err
}

func (c *storeCtx) Done() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done != nil {
		return c.done
	}
	c.done = make(chan struct{})
	if c.err != nil {
		close(c.done)
		return c.done
	}
	t := time.AfterFunc(time.Until(c.deadline), func() { c.end(context.DeadlineExceeded) })
	stopParent := func() bool { return false }
	if !c.detached {
		stopParent = context.AfterFunc(c.Context, func() { c.end(c.Context.Err()) })
	}
	c.stop = func() { t.Stop(); stopParent() }
	return c.done
}

// end ends the context with err, unless it has ended already.
func (c *storeCtx) end(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil {
		c.endLocked(err)
	}
}

// endLocked records err, when it is not nil, and closes done. The caller
// holds c.mu and has checked that c.err is nil.
func (c *storeCtx) endLocked(err error) {
	if err == nil {
		return
	}
	c.err = err
	if c.done != nil {
		close(c.done)
	}
}

// release ends the context, as the cancel function of context.WithTimeout
// does, and stops the timer and the watch on the parent that Done started.
func (c *storeCtx) release() {
	c.mu.Lock()
	if c.err == nil {
		c.endLocked(context.Canceled)
	}
	stop := c.stop
	c.stop = nil
	c.mu.Unlock()
	if stop != nil {
		stop()
	}
}
