package petstore

import (
	"context"
	"time"
)

// guardedStore is the Store as the operations call it, so that what applies
// to every call is done once:
//
//   - a call whose caller has gone (its context is done) does not reach the
//     store;
//   - every call runs under the store deadline (WithStoreTimeout), in a
//     storeCtx of its own over the context that the Authenticator returned;
//   - a create, once it reaches the store, runs to completion under that
//     deadline whether or not the client still waits; reads stop as soon as
//     the client goes.
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
