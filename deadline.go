package petstore

import (
	"context"
	"sync"
	"time"
)

// storeCtx is the context of one store call: its parent's values (the
// context that the Authenticator returned), its parent's cancellation unless
// detached, the store deadline, and the caller's principal.
//
// context.WithTimeout would do for the deadline, but it starts a timer and
// registers with its parent on every call; a store that only asks Err, as
// memstore does, needs neither. storeCtx makes the channel and the timer
// only when a store asks for Done, and otherwise compares the clock with
// the deadline when Err is called. BenchmarkStoreContext measures the two.
//
// What it costs and when it pays: about 190 lines, this file, kept to the
// rules of context.Context by TestDeadlineCtx. It pays only for a store
// that never asks for Done, which is memstore: there it is what keeps a get
// at 1 allocation and a list and a create within their limits (with
// context.WithTimeout: 5, 7 and 9 allocations against 1, 3 and 4, and about
// 0.4 to 0.5 µs more CPU per request; BENCHMARKS.md). A store that asks for
// Done on every call, as pgx does, gains nothing, and pays a little more
// than context.WithTimeout would cost it: 3 more allocations per get or
// list (one fewer per create) and about 0.2 µs, against a round trip to its
// database.
//
// The principal is carried here, rather than by context.WithValue, so that
// it costs nothing either: a storeCtx is taken from the handler's pool for
// each store call and put back after it (see storeCtxPool), unless a store
// asked for Done, in which case a timer or a watch on the parent may still
// hold it and it is left to the garbage collector. This is why a Store must
// not use its context once the call has returned (see Store).
//
// It keeps the rules of context.Context: Err returns nil until Done is
// closed (or would be, had it been asked for), then the same error for
// ever; Done is closed at the deadline or when the parent is done.
type storeCtx struct {
	context.Context // the parent, for its values (and its cancellation)

	deadline time.Time
	detached bool // the parent's cancellation does not reach this context

	mu sync.Mutex
	// principal is the caller's principal when the handler knows it (APIKeys
	// named it, or it was needed before the call); otherwise "", and Value
	// asks the parent, then makes a fingerprint of token.
	principal string
	token     string
	err       error
	done      chan struct{} // made by Done
	stop      func()        // stops the timer and the watch on the parent
}

// withStoreDeadline returns a new storeCtx over parent with the deadline d
// from now. With detached, the parent's cancellation and deadline do not
// apply. The caller must call release once the store call has returned.
func withStoreDeadline(parent context.Context, d time.Duration, detached bool) *storeCtx {
	c := &storeCtx{}
	c.start(parent, d, detached)
	return c
}

// start readies a new or reset c for a store call.
func (c *storeCtx) start(parent context.Context, d time.Duration, detached bool) {
	c.Context, c.deadline, c.detached = parent, time.Now().Add(d), detached
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
		if err == nil && !time.Now().Before(c.deadline) {
			err = context.DeadlineExceeded
		}
		c.finish(err)
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

// Value answers the principal's key with the caller's principal, which is
// never "" for an authenticated caller (see caller.Principal), and passes
// every other key on to the parent.
func (c *storeCtx) Value(key any) any {
	if _, ok := key.(principalKey); ok {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.principal == "" {
			v := c.Context.Value(key)
			if p, _ := v.(*string); (p != nil && *p != "") || c.token == "" {
				return v
			}
			c.principal = tokenPrincipal(c.token)
		}
		return &c.principal
	}
	return c.Context.Value(key)
}

// end ends the context with err, unless it has ended already.
func (c *storeCtx) end(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil {
		c.finish(err)
	}
}

// finish records err, when it is not nil, and closes done. The caller holds
// c.mu and has checked that c.err is nil.
func (c *storeCtx) finish(err error) {
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
// The caller calls it once the store call has returned. It reports whether
// c may be reused: nothing but the caller holds it, since Done was never
// asked for.
func (c *storeCtx) release() (reusable bool) {
	c.end(context.Canceled)
	c.mu.Lock()
	stop := c.stop
	c.stop = nil
	reusable = c.done == nil
	c.mu.Unlock()
	if stop != nil {
		stop()
	}
	return reusable
}

// storeCtxPool holds the storeCtx values of a handler that no call uses.
type storeCtxPool struct{ p sync.Pool }

// get returns a storeCtx for a store call, with the deadline d from now,
// detached from the parent's cancellation or not. When ctx is a callerCtx,
// the store's context has the Authenticator's context as its parent and the
// caller's principal; otherwise ctx is the parent.
func (p *storeCtxPool) get(ctx context.Context, d time.Duration, detached bool) *storeCtx {
	c, _ := p.p.Get().(*storeCtx)
	if c == nil {
		c = &storeCtx{}
	}
	if cc, ok := ctx.(*callerCtx); ok {
		ctx, c.principal, c.token = cc.Context, cc.principal, cc.token
	}
	c.start(ctx, d, detached)
	return c
}

// put releases c and keeps it for another call if nothing else holds it.
func (p *storeCtxPool) put(c *storeCtx) {
	if !c.release() {
		return
	}
	c.Context, c.principal, c.token, c.err = nil, "", "", nil
	p.p.Put(c)
}
