package sqlitestore_test

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
	"github.com/petstore-go/petstore/sqlitestore"
)

// records collects what Export yields.
func records(t *testing.T, s *sqlitestore.Store) []sqlitestore.Record {
	t.Helper()
	var rs []sqlitestore.Record
	for r, err := range s.Export(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	return rs
}

// TestExportImport exports a store with keys, live and forgotten, imports
// it into a new one, and checks that the new store exports the same, that
// keyed retries replay and that the next ID is past every imported one.
func TestExportImport(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	src := open(t, newPath(t), sqlitestore.WithClock(clk.now))
	expired := add(t, src, "key forgotten", "old")
	clk.advance(petstore.MinKeyRetention + time.Hour)
	plain := add(t, src, "no key", "")
	keyed := add(t, src, "keyed", "k1")
	stored := clk.now()
	clk.advance(time.Minute)
	want := []sqlitestore.Record{
		{Pet: expired},
		{Pet: plain},
		{Pet: keyed, Principal: "alice", Key: "k1", KeyCreated: stored},
	}
	if diff := cmp.Diff(want, records(t, src)); diff != "" {
		t.Fatalf("Export (-want +got):\n%s", diff)
	}

	dstClock := &clock{t: clk.now()}
	dst := open(t, newPath(t), sqlitestore.WithClock(dstClock.now))
	n, err := dst.Import(ctx, src.Export(ctx))
	if err != nil || n != 3 {
		t.Fatalf("Import: %d, %v; want 3 pets", n, err)
	}
	if diff := cmp.Diff(want, records(t, dst)); diff != "" {
		t.Errorf("Export after Import (-want +got):\n%s", diff)
	}
	if p := add(t, dst, "keyed", "k1"); p != keyed {
		t.Errorf("keyed retry after Import: %v; want %v replayed", p, keyed)
	}
	if p := add(t, dst, "next", ""); p.ID <= keyed.ID {
		t.Errorf("the first pet after Import has ID %d; want one above %d", p.ID, keyed.ID)
	}
	dstClock.advance(petstore.MinKeyRetention)
	if p := add(t, dst, "keyed", "k1"); p == keyed {
		t.Errorf("the imported key outlived its retention, counted from its first use")
	}

	if _, err := dst.Import(ctx, src.Export(ctx)); !errors.Is(err, sqlitestore.ErrNotEmpty) {
		t.Errorf("Import into a store with pets: %v; want ErrNotEmpty", err)
	}
}

// TestImportRefuses checks that Import stores nothing from records it
// refuses, and names the record: those that the record's check refuses
// (see internal/export), and a key that a record before holds.
func TestImportRefuses(t *testing.T) {
	clk := newClock()
	pet := func(id int64) sqlitestore.Record {
		return sqlitestore.Record{Pet: petstore.Pet{ID: id, NewPet: petstore.NewPet{Name: "Rex", CategoryID: 1}}}
	}
	keyed := func(id int64, created time.Time) sqlitestore.Record {
		r := pet(id)
		r.Principal, r.Key, r.KeyCreated = "alice", "k", created
		return r
	}
	tests := []struct {
		name     string
		records  []sqlitestore.Record
		wantText string
	}{
		{"no ID left after it", []sqlitestore.Record{pet(1), pet(math.MaxInt64)}, "record 2: pet ID 9223372036854775807 is above 9007199254740991"},
		{"key from the future", []sqlitestore.Record{keyed(1, clk.now().Add(time.Hour))}, "record 1: pet 1: the key was stored at 2026-01-01T01:00:00.000Z, in the future"},
		{"duplicate key", []sqlitestore.Record{keyed(1, clk.now()), keyed(2, clk.now())}, "record 2 (pet 2)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := open(t, newPath(t), sqlitestore.WithClock(clk.now))
			_, err := s.Import(context.Background(), seq(tt.records))
			if err == nil || !strings.Contains(err.Error(), tt.wantText) {
				t.Fatalf("Import: %v; want an error that says %q", err, tt.wantText)
			}
			if got := all(t, s); len(got) != 0 {
				t.Errorf("Import stored %v after an error", got)
			}
			if _, err := s.Import(context.Background(), seq([]sqlitestore.Record{pet(1)})); err != nil {
				t.Errorf("Import after a refused one: %v; want the store still empty", err)
			}
		})
	}
}

// seq yields the records.
func seq(rs []sqlitestore.Record) iter.Seq2[sqlitestore.Record, error] {
	return func(yield func(sqlitestore.Record, error) bool) {
		for _, r := range rs {
			if !yield(r, nil) {
				return
			}
		}
	}
}

// TestNoIDLeft checks that a file that has issued the last ID there is
// answers a create with an error that no retry helps (which the handler
// answers 500, not 503), and that Check says so.
func TestNoIDLeft(t *testing.T) {
	path := newPath(t)
	s := open(t, path)
	if _, err := rawDB(t, path).Exec(`INSERT INTO pets (id, name, category_id) VALUES (9223372036854775807, 'last', 1)`); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"", "k"} { // a lone insert, and a transaction
		_, _, err := s.Add(context.Background(), petstore.NewPet{Name: "one more", CategoryID: 1}, petstore.AddOptions{IdempotencyKey: key})
		if !errors.Is(err, sqlstore.ErrNoIDLeft) || errors.Is(err, petstore.ErrUnavailable) {
			t.Errorf("Add with key %q: %v; want ErrNoIDLeft, not ErrUnavailable", key, err)
		}
	}
	if err := s.Check(context.Background()); !errors.Is(err, sqlstore.ErrNoIDLeft) || errors.Is(err, petstore.ErrUnavailable) {
		t.Errorf("Check: %v; want ErrNoIDLeft, not ErrUnavailable", err)
	}
}
