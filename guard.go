package petstore

import (
	"context"
	"time"
)

// guardedStore is the Store as the operations call it: every call passes
// through here, so that what applies to all of them is done once.
//
//   - A call whose caller has gone (its context is done) does not reach the
//     store.
//   - Every call runs under the store deadline (WithStoreTimeout); past it,
//     the call returns an error wrapping context.DeadlineExceeded, which is
//     answered 503.
//   - The store's context is one of its own (a storeCtx) over the context
//     that the Authenticator returned, and carries the caller's principal, never ""
//     (see handler.authenticate). No other call shares it, so a store may
//     keep it after the call has returned.
//   - A create, once it reaches the store, runs to completion under that
//     deadline whether or not the client still waits: a client that hangs up
//     does not abort it half-way. Reads stop as soon as the client goes.
type guardedStore struct {
	s       Store
	timeout time.Duration
}

var _ Store = (*guardedStore)(nil)

func (g *guardedStore) Add(ctx context.Context, p NewPet, opts AddOptions) (Pet, bool, error) {
	if err := ctx.Err(); err != nil {
		return Pet{}, false, err
	}
	sctx := withStoreDeadline(ctx, g.timeout, true)
	defer sctx.release()
	return g.s.Add(sctx, p, opts)
}

func (g *guardedStore) Get(ctx context.Context, id int64) (Pet, error) {
	if err := ctx.Err(); err != nil {
		return Pet{}, err
	}
	sctx := withStoreDeadline(ctx, g.timeout, false)
	defer sctx.release()
	return g.s.Get(sctx, id)
}

func (g *guardedStore) List(ctx context.Context, opts ListOptions) ([]Pet, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	sctx := withStoreDeadline(ctx, g.timeout, false)
	defer sctx.release()
	return g.s.List(sctx, opts)
}
