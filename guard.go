package petstore

import "context"

// guardedStore is the Store as the operations call it: every call passes
// through here, so that what applies to all of them is done once. A call
// whose caller has gone (its context is done) does not reach the store.
type guardedStore struct {
	s Store
}

func (g guardedStore) Add(ctx context.Context, p NewPet) (Pet, error) {
	if err := ctx.Err(); err != nil {
		return Pet{}, err
	}
	return g.s.Add(ctx, p)
}

func (g guardedStore) Get(ctx context.Context, id int64) (Pet, error) {
	if err := ctx.Err(); err != nil {
		return Pet{}, err
	}
	return g.s.Get(ctx, id)
}

func (g guardedStore) List(ctx context.Context, opts ListOptions) ([]Pet, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return g.s.List(ctx, opts)
}
