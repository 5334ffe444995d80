// Package sqltest holds what the tests of the SQL stores (sqlitestore,
// pgstore) share: a test clock, and the check of Export and Import.
package sqltest

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/internal/export"
)

// A Store is a store with Export and Import.
type Store interface {
	petstore.Store
	Export(ctx context.Context) iter.Seq2[export.Record, error]
	Import(ctx context.Context, records iter.Seq2[export.Record, error]) (int64, error)
}

// A Clock is a test's clock, which moves only when told.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock returns a Clock that reads 2026-01-01 00:00 UTC.
func NewClock() *Clock { return &Clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock on by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// A Dump describes the stores whose Export and Import CheckDump checks.
type Dump struct {
	// Open returns a new, empty store on the clock now.
	Open func(t *testing.T, now func() time.Time) Store
	// ErrNotEmpty is what Import into a store that holds pets wraps.
	ErrNotEmpty error
	// DupKey is what the error of an Import that repeats a key says,
	// naming the records.
	DupKey string
	// OnTime is set when the store forgets a key as soon as its retention
	// has passed, rather than at its next pass of pruning.
	OnTime bool
}

// CheckDump checks the Export and Import of the stores that d opens.
func CheckDump(t *testing.T, d Dump) {
	t.Run("ExportImport", func(t *testing.T) { exportImport(t, d) })
	t.Run("ImportRefuses", func(t *testing.T) { importRefuses(t, d) })
}

// exportImport exports a store with keys, live and forgotten, imports it
// into a new one, and checks that the new store exports the same, that
// keyed retries replay, that the next ID is past every imported one, and,
// with d.OnTime, that an imported key is forgotten when its retention has
// passed from when it was first stored; and that an Import of many records,
// with keys and without, exports as it was.
func exportImport(t *testing.T, d Dump) {
	ctx := petstore.WithPrincipal(context.Background(), "alice")
	add := func(s Store, name, key string) petstore.Pet {
		t.Helper()
		p, _, err := s.Add(ctx, petstore.NewPet{Name: name, CategoryID: 2, Status: petstore.StatusSold}, petstore.AddOptions{IdempotencyKey: key})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	clk := NewClock()
	src := d.Open(t, clk.Now)
	expired := add(src, "key forgotten", "old")
	clk.Advance(petstore.MinKeyRetention + time.Hour)
	plain := add(src, "no key", "")
	keyed := add(src, "keyed", "k1")
	stored := clk.Now()
	clk.Advance(time.Minute)
	want := []export.Record{
		{Pet: expired},
		{Pet: plain},
		{Pet: keyed, Principal: "alice", Key: "k1", KeyCreated: stored},
	}
	if diff := cmp.Diff(want, records(t, src)); diff != "" {
		t.Fatalf("Export (-want +got):\n%s", diff)
	}

	dstClock := &Clock{t: clk.Now()}
	dst := d.Open(t, dstClock.Now)
	n, err := dst.Import(ctx, src.Export(ctx))
	if err != nil || n != 3 {
		t.Fatalf("Import: %d, %v; want 3 pets", n, err)
	}
	if diff := cmp.Diff(want, records(t, dst)); diff != "" {
		t.Errorf("Export after Import (-want +got):\n%s", diff)
	}
	if p := add(dst, "keyed", "k1"); p != keyed {
		t.Errorf("keyed retry after Import: %v; want %v replayed", p, keyed)
	}
	if p := add(dst, "next", ""); p.ID <= keyed.ID {
		t.Errorf("the first pet after Import has ID %d; want one above %d", p.ID, keyed.ID)
	}
	dstClock.Advance(petstore.MinKeyRetention)
	if p := add(dst, "keyed", "k1"); d.OnTime && p == keyed {
		t.Errorf("the imported key outlived its retention, counted from its first use")
	}
	if _, err := dst.Import(ctx, src.Export(ctx)); !errors.Is(err, d.ErrNotEmpty) {
		t.Errorf("Import into a store with pets: %v; want %v", err, d.ErrNotEmpty)
	}

	// More records than a store sends at once, every third with a key.
	many := make([]export.Record, 2500)
	for i := range many {
		many[i].Pet = petstore.Pet{ID: int64(2 * (i + 1)), NewPet: petstore.NewPet{Name: fmt.Sprint("pet ", i), CategoryID: 1}}
		if i%3 == 0 {
			many[i].Principal, many[i].Key, many[i].KeyCreated = "bob", fmt.Sprint("k", i), clk.Now()
		}
	}
	big := d.Open(t, clk.Now)
	if n, err := big.Import(ctx, seq(many)); err != nil || n != int64(len(many)) {
		t.Fatalf("Import of %d records: %d, %v", len(many), n, err)
	}
	if diff := cmp.Diff(many, records(t, big)); diff != "" {
		t.Errorf("Export after an Import of %d records (-want +got):\n%s", len(many), diff)
	}
}

// records collects what Export yields.
func records(t *testing.T, s Store) []export.Record {
	t.Helper()
	var rs []export.Record
	for r, err := range s.Export(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	return rs
}

// importRefuses checks that Import stores nothing from records it refuses,
// and names the record: those that the record's check refuses (see
// internal/export), and a key that a record before holds.
func importRefuses(t *testing.T, d Dump) {
	clk := NewClock()
	pet := func(id int64) export.Record {
		return export.Record{Pet: petstore.Pet{ID: id, NewPet: petstore.NewPet{Name: "Rex", CategoryID: 1}}}
	}
	keyed := func(id int64, created time.Time) export.Record {
		r := pet(id)
		r.Principal, r.Key, r.KeyCreated = "alice", "k", created
		return r
	}
	tests := []struct {
		name     string
		records  []export.Record
		wantText string
	}{
		{"no ID left after it", []export.Record{pet(1), pet(math.MaxInt64)}, "record 2: pet ID 9223372036854775807 is above 9007199254740991"},
		{"key from the future", []export.Record{keyed(1, clk.Now().Add(time.Hour))}, "record 1: pet 1: the key was stored at 2026-01-01T01:00:00.000Z, in the future"},
		{"duplicate key", []export.Record{keyed(1, clk.Now()), keyed(2, clk.Now())}, d.DupKey},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := d.Open(t, clk.Now)
			_, err := s.Import(context.Background(), seq(tt.records))
			if err == nil || !strings.Contains(err.Error(), tt.wantText) {
				t.Fatalf("Import: %v; want an error that says %q", err, tt.wantText)
			}
			if got, err := s.List(context.Background(), petstore.ListOptions{}); err != nil || len(got) != 0 {
				t.Errorf("after a refused Import the store holds %v, %v", got, err)
			}
			if _, err := s.Import(context.Background(), seq([]export.Record{pet(1)})); err != nil {
				t.Errorf("Import after a refused one: %v; want the store still empty", err)
			}
		})
	}
}

// seq yields the records.
func seq(rs []export.Record) iter.Seq2[export.Record, error] {
	return func(yield func(export.Record, error) bool) {
		for _, r := range rs {
			if !yield(r, nil) {
				return
			}
		}
	}
}

// Rounds makes b.N calls of each of kinds, from callers goroutines at once,
// in rounds of round calls of each kind, each kind going first in turn, so
// that a load that changes during the run (the machine is shared, the disk
// still writes what the kind before wrote) weighs on all alike. It returns
// the time that each kind took in all.
func Rounds(b *testing.B, callers, round int, kinds ...func() error) []time.Duration {
	spent := make([]time.Duration, len(kinds))
	for r, done := 0, 0; done < b.N; r++ {
		n := min(round, b.N-done)
		for j := range kinds {
			k := (r + j) % len(kinds)
			spent[k] += Parallel(b, callers, n, func(int) error { return kinds[k]() })
		}
		done += n
	}
	return spent
}

// Parallel calls f(0) to f(n-1) from callers goroutines at once, and
// returns how long it took. An error of f fails b, and ends its goroutine.
func Parallel(b testing.TB, callers, n int, f func(i int) error) time.Duration {
	var (
		next atomic.Int64
		wg   sync.WaitGroup
	)
	start := time.Now()
	for range min(callers, n) {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				if err := f(i); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	return time.Since(start)
}
