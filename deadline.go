package petstore

import (
	"context"
	"sync"
	"time"
)

// deadlineCtx is the context of one store call: its parent's values, its
// parent's cancellation unless detached, and the store deadline.
//
// context.WithDeadline would do, but it starts a timer and registers with
// its parent on every call, which is about 40% of a get from memstore; a
// store that only asks Err, as memstore does, needs neither. deadlineCtx
// makes the channel and the timer only when a store asks for Done, and
// otherwise compares the clock with the deadline when Err is called.
// BenchmarkStoreContext measures the difference.
//
// It keeps the rules of context.Context: Err returns nil until Done is
// closed (or would be, had it been asked for), then the same error for
// ever; Done is closed at the deadline or when the parent is done.
type deadlineCtx struct {
	context.Context // the parent, for its values (and its cancellation)

	deadline time.Time
	detached bool // the parent's cancellation does not reach this context

	mu   sync.Mutex
	err  error
	done chan struct{} // made by Done
	stop func()        // stops the timer and the watch on the parent
}

// withStoreDeadline returns parent with the deadline d from now. With
// detached, the parent's cancellation and deadline do not apply. The caller
// must call release once the store call has returned.
func withStoreDeadline(parent context.Context, d time.Duration, detached bool) *deadlineCtx {
	return &deadlineCtx{Context: parent, deadline: time.Now().Add(d), detached: detached}
}

func (c *deadlineCtx) Deadline() (time.Time, bool) {
	if !c.detached {
		if d, ok := c.Context.Deadline(); ok && d.Before(c.deadline) {
			return d, true
		}
	}
	return c.deadline, true
}

func (c *deadlineCtx) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil {
		var err error
		if !c.detached {
			err = c.Context.Err()
		}
		if err == nil && !time.Now().Before(c.deadline) {
			err = context.DeadlineExceeded
		}
		c.finish(err)
	}
	return c.err
}

func (c *deadlineCtx) Done() <-chan struct{} {
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

// Value passes every key on to the parent.
func (c *deadlineCtx) Value(key any) any { return c.Context.Value(key) }

// end ends the context with err, unless it has ended already.
func (c *deadlineCtx) end(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil {
		c.finish(err)
	}
}

// finish records err, when it is not nil, and closes done. The caller holds
// c.mu and has checked that c.err is nil.
func (c *deadlineCtx) finish(err error) {
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
// The caller calls it once the store call has returned.
func (c *deadlineCtx) release() {
	c.end(context.Canceled)
	c.mu.Lock()
	stop := c.stop
	c.stop = nil
	c.mu.Unlock()
	if stop != nil {
		stop()
	}
}
