package petstore_test

import (
	"context"
	"testing"

	"github.com/petstore-go/petstore"
)

// doneStore asks its context for Done before every call, as pgx does, and
// then calls the Store it wraps.
type doneStore struct{ petstore.Store }

var _ petstore.Store = doneStore{}

func (s doneStore) Add(ctx context.Context, p petstore.NewPet, opts petstore.AddOptions) (petstore.Pet, bool, error) {
	_ = ctx.Done()
	return s.Store.Add(ctx, p, opts)
}

func (s doneStore) Get(ctx context.Context, id int64) (petstore.Pet, error) {
	_ = ctx.Done()
	return s.Store.Get(ctx, id)
}

func (s doneStore) List(ctx context.Context, opts petstore.ListOptions) ([]petstore.Pet, error) {
	_ = ctx.Done()
	return s.Store.List(ctx, opts)
}

// BenchmarkStoreCall serves a list of 20, a get and a create over memstore
// with benchPets pets (store=memstore), which asks its context only for Err,
// and over the same store behind doneStore (store=asksDone), which asks for
// Done as pgx does: what the store context costs each kind of store. Build
// it once as it is and once with guardedStore calling context.WithTimeout,
// and run both with bench/cpu.sh, to see what the store context buys
// (BENCHMARKS.md).
//
//	go test -run '^$' -bench StoreCall -benchmem -count 3 .
func BenchmarkStoreCall(b *testing.B) {
	ms := benchStore(b, benchPets)
	for _, st := range []struct {
		name string
		s    petstore.Store
	}{{"memstore", ms}, {"asksDone", doneStore{ms}}} {
		h := benchHandler(b, st.s)
		for _, c := range benchCases {
			if c.name != "ListPets" && c.name != "GetPet" && c.name != "CreatePet" {
				continue
			}
			var body []byte
			if c.body != "" {
				body = []byte(c.body)
			}
			b.Run("store="+st.name+"/op="+c.name, func(b *testing.B) {
				benchServe(b, h, newBenchRequest(c.method, c.target, c.key, body, c.header...), c.want)
			})
		}
	}
}
