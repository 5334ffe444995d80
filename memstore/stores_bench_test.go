package memstore_test

import (
	"context"
	"runtime"
	"testing"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/memstore"
)

// BenchmarkStores measures memstore's packed Store (impl=packed) beside the
// example's simpleStore, a slice of petstore.Pet (impl=simple), in one run:
// Get, a List of 20 with and without a status filter and the GC with
// 1,000,000 pets held, and Add to a store that grows with b.N. The GC
// sub-benchmark times a forced runtime.GC() per op and reports the store's
// live heap per pet beyond the bytes of the names (B/pet) and the collector's
// stop-the-world pause per collection (pause-ns/GC). One store of a million
// pets is held at a time, so that neither's heap weighs on the other's GC.
//
//	go test -run '^$' -bench Stores -benchmem -benchtime 200ms -count 3 ./memstore
//	benchstat -col /impl out.txt
func BenchmarkStores(b *testing.B) {
	const n = 1_000_000
	impls := []struct {
		name string
		new  func() petstore.Store
	}{
		{"packed", func() petstore.Store { return memstore.New() }},
		{"simple", func() petstore.Store { return &simpleStore{} }},
	}
	ctx := context.Background()
	for _, impl := range impls {
		b.Run("op=Add/impl="+impl.name, func(b *testing.B) {
			s := impl.new()
			p := petstore.NewPet{Name: "Rex", CategoryID: 3, Status: petstore.StatusAvailable}
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := s.Add(ctx, p, petstore.AddOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	for _, impl := range impls {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		s := impl.new()
		nameBytes := benchFill(b, s, n)
		runtime.GC()
		runtime.ReadMemStats(&after)
		perPet := (float64(after.HeapAlloc) - float64(before.HeapAlloc) - float64(nameBytes)) / n

		b.Run("op=Get/impl="+impl.name, func(b *testing.B) {
			b.ReportAllocs()
			id := int64(0)
			for b.Loop() {
				id = id%n + 1
				if _, err := s.Get(ctx, id); err != nil {
					b.Fatal(err)
				}
			}
		})
		for _, st := range []petstore.Status{"", petstore.StatusAvailable} {
			op := "op=List20"
			if st != "" {
				op += string(st)
			}
			opts := petstore.ListOptions{Status: st, Limit: 20, After: n / 2}
			b.Run(op+"/impl="+impl.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if pets, err := s.List(ctx, opts); err != nil || len(pets) != 20 {
						b.Fatal(len(pets), err)
					}
				}
			})
		}
		b.Run("op=GC/impl="+impl.name, func(b *testing.B) {
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			for b.Loop() {
				runtime.GC()
			}
			runtime.ReadMemStats(&m1)
			b.ReportMetric(perPet, "B/pet")
			b.ReportMetric(float64(m1.PauseTotalNs-m0.PauseTotalNs)/float64(m1.NumGC-m0.NumGC), "pause-ns/GC")
		})
		runtime.KeepAlive(s)
	}
}
