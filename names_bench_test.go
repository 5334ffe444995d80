package petstore_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/petstore-go/petstore"
)

// copyingStore is a Store whose pets' names are strings of their own,
// copied from the names the Store it wraps returns.
type copyingStore struct{ petstore.Store }

var _ petstore.Store = copyingStore{}

func (s copyingStore) Get(ctx context.Context, id int64) (petstore.Pet, error) {
	p, err := s.Store.Get(ctx, id)
	p.Name = strings.Clone(p.Name)
	return p, err
}

func (s copyingStore) List(ctx context.Context, opts petstore.ListOptions) ([]petstore.Pet, error) {
	pets, err := s.Store.List(ctx, opts)
	for i := range pets {
		pets[i].Name = strings.Clone(pets[i].Name)
	}
	return pets, err
}

// BenchmarkHandlerNames serves a list of 20 and a get from memstore, whose
// names are strings over its own bytes (impl=shared), and from the same
// store with every name copied into a string of its own (impl=copy), which
// is what memstore would cost if it copied each name it returns.
//
//	go test -run '^$' -bench HandlerNames -benchmem -count 6 .
func BenchmarkHandlerNames(b *testing.B) {
	store := benchStore(b, benchPets)
	stores := []struct {
		name  string
		store petstore.Store
	}{
		{"shared", store},
		{"copy", copyingStore{store}},
	}
	for _, c := range benchCases {
		if c.name != "ListPets" && c.name != "GetPet" {
			continue
		}
		for _, s := range stores {
			h := benchHandler(b, s.store)
			b.Run("op="+c.name+"/impl="+s.name, func(b *testing.B) {
				benchServe(b, h, newBenchRequest(c.method, c.target, c.key, nil), http.StatusOK)
			})
		}
	}
}
