package memstore_test

import (
	"context"
	"runtime"
	"strconv"
	"testing"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/memstore"
)

// benchStatuses are the statuses the benchmark pets cycle through.
var benchStatuses = []petstore.Status{"", petstore.StatusAvailable, petstore.StatusPending, petstore.StatusSold}

// benchFill adds n pets to s, named "pet 1", "pet 2" and so on, and returns
// the number of bytes of their names.
func benchFill(tb testing.TB, s *memstore.Store, n int) int {
	tb.Helper()
	ctx := context.Background()
	nameBytes := 0
	for i := range n {
		p := petstore.NewPet{Name: "pet " + strconv.Itoa(i+1), CategoryID: int64(i%7 + 1), Status: benchStatuses[i%4]}
		nameBytes += len(p.Name)
		if _, _, err := s.Add(ctx, p, petstore.AddOptions{}); err != nil {
			tb.Fatal(err)
		}
	}
	return nameBytes
}

// perfMaxBytesPerPet is the most heap memory that a pet may take in the
// store beyond the bytes of its name.
const perfMaxBytesPerPet = 96

// TestPerfMemoryPerPet checks that the store holds 1,000,000 pets in at most
// perfMaxBytesPerPet bytes per pet beyond the bytes of their names: the live
// heap after a collection, with and without the store, over the pets.
func TestPerfMemoryPerPet(t *testing.T) {
	const n = 1_000_000
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	s := memstore.New()
	nameBytes := benchFill(t, s, n)
	runtime.GC()
	runtime.ReadMemStats(&after)
	if s.Len() != n {
		t.Fatalf("Len = %d, want %d", s.Len(), n)
	}
	runtime.KeepAlive(s)
	perPet := (float64(after.HeapAlloc) - float64(before.HeapAlloc) - float64(nameBytes)) / n
	t.Logf("%d pets: %.1f bytes per pet beyond %d bytes of names", n, perPet, nameBytes)
	if perPet > perfMaxBytesPerPet {
		t.Errorf("%.1f bytes per pet beyond the names, want at most %d", perPet, perfMaxBytesPerPet)
	}
}

// BenchmarkAdd adds pets to a store that grows with b.N.
func BenchmarkAdd(b *testing.B) {
	s := memstore.New()
	ctx := context.Background()
	p := petstore.NewPet{Name: "Rex", CategoryID: 3, Status: petstore.StatusAvailable}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := s.Add(ctx, p, petstore.AddOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGet gets pets from stores of 1,000 and 1,000,000 pets.
func BenchmarkGet(b *testing.B) {
	ctx := context.Background()
	for _, n := range []int{1_000, 1_000_000} {
		s := memstore.New()
		benchFill(b, s, n)
		b.Run("pets="+strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			id := int64(0)
			for b.Loop() {
				id = id%int64(n) + 1
				if _, err := s.Get(ctx, id); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkList lists the first page of 21 pets (a page of 20 and one to
// tell whether more follow, as the handler asks), with and without a status
// filter, from stores of 1,000 and 1,000,000 pets.
func BenchmarkList(b *testing.B) {
	ctx := context.Background()
	for _, n := range []int{1_000, 1_000_000} {
		s := memstore.New()
		benchFill(b, s, n)
		for _, st := range []petstore.Status{"", petstore.StatusAvailable} {
			opts := petstore.ListOptions{Status: st, Limit: 21}
			filter := string(st)
			if filter == "" {
				filter = "none"
			}
			name := "filter=" + filter + "/pets=" + strconv.Itoa(n)
			b.Run(name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if pets, err := s.List(ctx, opts); err != nil || len(pets) != 21 {
						b.Fatal(len(pets), err)
					}
				}
			})
		}
	}
}
