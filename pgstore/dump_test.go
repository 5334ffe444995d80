package pgstore_test

import (
	"context"
	"errors"
	"iter"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/pgstore"
)

// testClock is a clock that tests move.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// exported collects what Export yields.
func exported(t *testing.T, s *pgstore.Store) []pgstore.Record {
	t.Helper()
	var rs []pgstore.Record
	for r, err := range s.Export(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	return rs
}

// TestExportImport exports a table with keys, live and forgotten, imports
// it into a new one, and checks that the new table exports the same, that
// keyed retries replay and that the next ID is past every imported one.
func TestExportImport(t *testing.T) {
	ctx := petstore.WithPrincipal(context.Background(), "alice")
	pool := pgPool(t)
	clk := &testClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	src := pgStore(t, pool, pgstore.WithClock(clk.now))
	addPet := func(s *pgstore.Store, name, key string) petstore.Pet {
		t.Helper()
		p, _, err := s.Add(ctx, petstore.NewPet{Name: name, CategoryID: 2, Status: petstore.StatusSold}, petstore.AddOptions{IdempotencyKey: key})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	expired := addPet(src, "key forgotten", "old")
	clk.advance(petstore.MinKeyRetention + time.Hour)
	plain := addPet(src, "no key", "")
	keyed := addPet(src, "keyed", "k1")
	stored := clk.now()
	clk.advance(time.Minute)
	want := []pgstore.Record{
		{Pet: expired},
		{Pet: plain},
		{Pet: keyed, Principal: "alice", Key: "k1", KeyCreated: stored},
	}
	if diff := cmp.Diff(want, exported(t, src)); diff != "" {
		t.Fatalf("Export (-want +got):\n%s", diff)
	}

	dstClock := &testClock{t: clk.now()}
	dst := pgStore(t, pool, pgstore.WithClock(dstClock.now))
	n, err := dst.Import(ctx, src.Export(ctx))
	if err != nil || n != 3 {
		t.Fatalf("Import: %d, %v; want 3 pets", n, err)
	}
	if diff := cmp.Diff(want, exported(t, dst)); diff != "" {
		t.Errorf("Export after Import (-want +got):\n%s", diff)
	}
	if p := addPet(dst, "keyed", "k1"); p != keyed {
		t.Errorf("keyed retry after Import: %v; want %v replayed", p, keyed)
	}
	if p := addPet(dst, "next", ""); p.ID <= keyed.ID {
		t.Errorf("the first pet after Import has ID %d; want one above %d", p.ID, keyed.ID)
	}
	if _, err := dst.Import(ctx, src.Export(ctx)); !errors.Is(err, pgstore.ErrNotEmpty) {
		t.Errorf("Import into a table with pets: %v; want ErrNotEmpty", err)
	}
}

// TestImportRefuses checks that Import stores nothing from input it
// refuses, and names the record.
func TestImportRefuses(t *testing.T) {
	pool := pgPool(t)
	pet := func(id int64) pgstore.Record {
		return pgstore.Record{Pet: petstore.Pet{ID: id, NewPet: petstore.NewPet{Name: "Rex", CategoryID: 1}}}
	}
	tests := []struct {
		name     string
		records  []pgstore.Record
		wantText string
	}{
		{"IDs not ascending", []pgstore.Record{pet(2), pet(1)}, "record 2: pet ID 1 after 2"},
		{"invalid pet", []pgstore.Record{pet(1), {Pet: petstore.Pet{ID: 2}}}, "record 2: pet 2"},
		{"duplicate key", []pgstore.Record{
			{Pet: pet(1).Pet, Principal: "alice", Key: "k", KeyCreated: time.Now()},
			{Pet: pet(2).Pet, Principal: "alice", Key: "k", KeyCreated: time.Now()},
		}, "records 1 to 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := pgStore(t, pool)
			_, err := s.Import(context.Background(), func(yield func(pgstore.Record, error) bool) {
				for r := range slices.Values(tt.records) {
					if !yield(r, nil) {
						return
					}
				}
			})
			if err == nil || !strings.Contains(err.Error(), tt.wantText) {
				t.Fatalf("Import: %v; want an error that says %q", err, tt.wantText)
			}
			if got, err := s.List(context.Background(), petstore.ListOptions{}); err != nil || len(got) != 0 {
				t.Errorf("after a refused Import the table holds %v, %v", got, err)
			}
			if _, err := s.Import(context.Background(), iter.Seq2[pgstore.Record, error](func(yield func(pgstore.Record, error) bool) { yield(pet(1), nil) })); err != nil {
				t.Errorf("Import after a refused one: %v; want the table still new", err)
			}
		})
	}
}
