package memstore_test

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"testing"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/memstore"
)

// benchStatuses are the statuses the benchmark pets cycle through.
var benchStatuses = []petstore.Status{"", petstore.StatusAvailable, petstore.StatusPending, petstore.StatusSold}

// benchFill adds n pets to s, named "pet 1", "pet 2" and so on.
func benchFill(tb testing.TB, s petstore.Store, n int) {
	tb.Helper()
	ctx := context.Background()
	for i := range n {
		p := petstore.NewPet{Name: "pet " + strconv.Itoa(i+1), CategoryID: int64(i%7 + 1), Status: benchStatuses[i%4]}
		if _, _, err := s.Add(ctx, p, petstore.AddOptions{}); err != nil {
			tb.Fatal(err)
		}
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

// perfMaxBytesPerKey is the most heap memory that an idempotency key may
// take in the store beyond the bytes of its text.
const perfMaxBytesPerKey = 160

// TestPerfMemoryPerKey measures what an idempotency key costs: the live
// heap of 100,000 keyed creates beside that of 100,000 plain ones, less the
// bytes of the keys' text, for keys of 26 bytes (what client.Add sends)
// and of 255 (the longest).
func TestPerfMemoryPerKey(t *testing.T) {
	const n = 100_000
	ctx := petstore.WithPrincipal(context.Background(), "key-0123456789abcdef")
	heapOf := func(keyLen int) uint64 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		s := memstore.New()
		for i := range n {
			var opts petstore.AddOptions
			if keyLen > 0 {
				opts.IdempotencyKey = fmt.Sprintf("%0*d", keyLen, i)
			}
			if _, _, err := s.Add(ctx, petstore.NewPet{Name: "Rex", CategoryID: 1}, opts); err != nil {
				t.Fatal(err)
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		runtime.KeepAlive(s)
		return after.HeapAlloc - before.HeapAlloc
	}
	plain := heapOf(0)
	for _, keyLen := range []int{26, 255} {
		perKey := (float64(heapOf(keyLen)) - float64(plain)) / n
		t.Logf("%d-byte keys: %.0f bytes per key, %.0f beyond its text", keyLen, perKey, perKey-float64(keyLen))
		if perKey-float64(keyLen) > perfMaxBytesPerKey {
			t.Errorf("%d-byte keys: %.0f bytes per key beyond its text, want at most %d", keyLen, perKey-float64(keyLen), perfMaxBytesPerKey)
		}
	}
}
