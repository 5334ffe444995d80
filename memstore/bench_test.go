package memstore_test

import (
	"context"
	"fmt"
	"runtime"
	"runtime/metrics"
	"strconv"
	"testing"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/memstore"
)

// benchStatuses are the statuses the benchmark pets cycle through.
var benchStatuses = []petstore.Status{"", petstore.StatusAvailable, petstore.StatusPending, petstore.StatusSold}

// benchFill adds n pets to s, named "pet 1", "pet 2" and so on, and returns
// the number of bytes of their names.
func benchFill(tb testing.TB, s petstore.Store, n int) int {
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
const perfMaxBytesPerPet = 32

// TestPerfMemoryPerPet checks that the store holds 1,000,000 pets in at most
// perfMaxBytesPerPet bytes per pet beyond the bytes of their names (the live
// heap after a collection, with and without the store, over the pets), and
// that they hold no pointers for the garbage collector to follow: the
// heap it scans (runtime/metrics' /gc/scan/heap:bytes) grows by less than a
// byte a pet, where a string per pet would add 48.
func TestPerfMemoryPerPet(t *testing.T) {
	const n = 1_000_000
	var before, after runtime.MemStats
	scanned := []metrics.Sample{{Name: "/gc/scan/heap:bytes"}}
	runtime.GC()
	runtime.ReadMemStats(&before)
	metrics.Read(scanned)
	scannedBefore := scanned[0].Value.Uint64()
	s := memstore.New()
	nameBytes := benchFill(t, s, n)
	runtime.GC()
	runtime.ReadMemStats(&after)
	metrics.Read(scanned)
	if s.Len() != n {
		t.Fatalf("Len = %d, want %d", s.Len(), n)
	}
	runtime.KeepAlive(s)
	perPet := (float64(after.HeapAlloc) - float64(before.HeapAlloc) - float64(nameBytes)) / n
	t.Logf("%d pets: %.1f bytes per pet beyond %d bytes of names", n, perPet, nameBytes)
	if perPet > perfMaxBytesPerPet {
		t.Errorf("%.1f bytes per pet beyond the names, want at most %d", perPet, perfMaxBytesPerPet)
	}
	scannedPerPet := (float64(scanned[0].Value.Uint64()) - float64(scannedBefore)) / n
	t.Logf("%d pets: the collector scans %.2f bytes per pet", n, scannedPerPet)
	if scannedPerPet >= 1 {
		t.Errorf("the collector scans %.1f bytes per pet, want less than 1", scannedPerPet)
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
