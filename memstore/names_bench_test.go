package memstore_test

import (
	"context"
	"strings"
	"testing"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/memstore"
)

// BenchmarkListNames lists a page of 20 pets from a store of 100,000 with
// List, whose names are strings over the store's bytes (impl=shared), and
// with List followed by a copy of each name (impl=copy), which is what List
// would cost if it returned each name as a string of its own: the copy and
// an allocation per pet.
//
//	go test -run '^$' -bench ListNames -benchmem -count 6 ./memstore
func BenchmarkListNames(b *testing.B) {
	ctx := context.Background()
	s := memstore.New()
	benchFill(b, s, 100_000)
	opts := petstore.ListOptions{Limit: 20, After: 50_000}
	b.Run("impl=shared", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if pets, err := s.List(ctx, opts); err != nil || len(pets) != 20 {
				b.Fatal(len(pets), err)
			}
		}
	})
	b.Run("impl=copy", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			pets, err := s.List(ctx, opts)
			if err != nil || len(pets) != 20 {
				b.Fatal(len(pets), err)
			}
			for i := range pets {
				pets[i].Name = strings.Clone(pets[i].Name)
			}
		}
	})
}
