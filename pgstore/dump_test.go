package pgstore_test

import (
	"context"
	"errors"
	"iter"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/internal/sqlstore"
	"github.com/petstore-go/petstore/pgstore"
)

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
	clk := &keysClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	src := pgStore(t, pool, pgstore.WithClock(clk.Now))
	addPet := func(s *pgstore.Store, name, key string) petstore.Pet {
		t.Helper()
		p, _, err := s.Add(ctx, petstore.NewPet{Name: name, CategoryID: 2, Status: petstore.StatusSold}, petstore.AddOptions{IdempotencyKey: key})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	expired := addPet(src, "key forgotten", "old")
	clk.Advance(petstore.MinKeyRetention + time.Hour)
	plain := addPet(src, "no key", "")
	keyed := addPet(src, "keyed", "k1")
	stored := clk.Now()
	clk.Advance(time.Minute)
	want := []pgstore.Record{
		{Pet: expired},
		{Pet: plain},
		{Pet: keyed, Principal: "alice", Key: "k1", KeyCreated: stored},
	}
	if diff := cmp.Diff(want, exported(t, src)); diff != "" {
		t.Fatalf("Export (-want +got):\n%s", diff)
	}

	dstClock := &keysClock{now: clk.Now()}
	dst := pgStore(t, pool, pgstore.WithClock(dstClock.Now))
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

// TestImportRefuses checks that Import stores nothing from records it
// refuses, and names the record: those that the record's check refuses
// (see internal/export), and a key that a record before holds.
func TestImportRefuses(t *testing.T) {
	pool := pgPool(t)
	clk := &keysClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	pet := func(id int64) pgstore.Record {
		return pgstore.Record{Pet: petstore.Pet{ID: id, NewPet: petstore.NewPet{Name: "Rex", CategoryID: 1}}}
	}
	keyed := func(id int64, created time.Time) pgstore.Record {
		r := pet(id)
		r.Principal, r.Key, r.KeyCreated = "alice", "k", created
		return r
	}
	tests := []struct {
		name     string
		records  []pgstore.Record
		wantText string
	}{
		{"no ID left after it", []pgstore.Record{pet(1), pet(math.MaxInt64)}, "record 2: pet ID 9223372036854775807 is above 9007199254740991"},
		{"key from the future", []pgstore.Record{keyed(1, clk.Now().Add(time.Hour))}, "record 1: pet 1: the key was stored at 2026-01-01T01:00:00.000Z, in the future"},
		{"duplicate key", []pgstore.Record{keyed(1, clk.Now()), keyed(2, clk.Now())}, "records 1 to 2"},
	}
	seq := func(rs ...pgstore.Record) iter.Seq2[pgstore.Record, error] {
		return func(yield func(pgstore.Record, error) bool) {
			for _, r := range rs {
				if !yield(r, nil) {
					return
				}
			}
		}
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := pgStore(t, pool, pgstore.WithClock(clk.Now))
			_, err := s.Import(context.Background(), seq(tt.records...))
			if err == nil || !strings.Contains(err.Error(), tt.wantText) {
				t.Fatalf("Import: %v; want an error that says %q", err, tt.wantText)
			}
			if got, err := s.List(context.Background(), petstore.ListOptions{}); err != nil || len(got) != 0 {
				t.Errorf("after a refused Import the table holds %v, %v", got, err)
			}
			if _, err := s.Import(context.Background(), seq(pet(1))); err != nil {
				t.Errorf("Import after a refused one: %v; want the table still new", err)
			}
		})
	}
}

// TestNoIDLeft checks that a table that holds the last ID there is
// answers a create with an error that no retry helps, and that Check says
// so.
func TestNoIDLeft(t *testing.T) {
	pool := pgPool(t)
	ctx := context.Background()
	s := pgStore(t, pool)
	if _, err := pool.Exec(ctx, `INSERT INTO `+s.Table()+` (id, name, category_id) OVERRIDING SYSTEM VALUE VALUES (9223372036854775807, 'last', 1)`); err != nil {
		t.Fatal(err)
	}
	if err := s.Check(ctx); !errors.Is(err, sqlstore.ErrNoIDLeft) || errors.Is(err, petstore.ErrUnavailable) {
		t.Errorf("Check: %v; want ErrNoIDLeft, not ErrUnavailable", err)
	}
	if _, err := pool.Exec(ctx, `SELECT setval(pg_get_serial_sequence($1, 'id'), 9223372036854775807)`, s.Table()); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"", "k"} {
		_, _, err := s.Add(ctx, petstore.NewPet{Name: "one more", CategoryID: 1}, petstore.AddOptions{IdempotencyKey: key})
		if !errors.Is(err, sqlstore.ErrNoIDLeft) || errors.Is(err, petstore.ErrUnavailable) {
			t.Errorf("Add with key %q: %v; want ErrNoIDLeft, not ErrUnavailable", key, err)
		}
	}
}
