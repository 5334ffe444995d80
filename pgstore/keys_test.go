package pgstore_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/internal/testkit/sqltest"
	"github.com/petstore-go/petstore/internal/testkit/syncbuf"
	"github.com/petstore-go/petstore/pgstore"
)

// prunePasses returns the lines of log that report a pass that pruned keys.
func prunePasses(log *syncbuf.Buffer) []string {
	var lines []string
	for line := range strings.Lines(log.String()) {
		if strings.Contains(line, "pruned idempotency keys") {
			lines = append(lines, strings.TrimSpace(line))
		}
	}
	return lines
}

// addAnother adds a pet without a key, which starts a pass of pruning when
// none ran for a minute, and returns false.
func addAnother(t *testing.T, s *pgstore.Store) bool {
	t.Helper()
	pgAdd(t, s, petstore.NewPet{Name: "Tom", CategoryID: 1})
	return false
}

// TestKeyRetention checks that a key is replayed until its retention ends,
// and forgotten after it: a pass of pruning, logged at debug level and
// counted, deletes it, and the key then stores a new pet.
func TestKeyRetention(t *testing.T) {
	const retention = 36 * time.Hour
	pool := pgPool(t)
	clock := sqltest.NewClock()
	logs := &syncbuf.Buffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s := pgStore(t, pool, pgstore.WithKeyRetention(retention), pgstore.WithClock(clock.Now), pgstore.WithLogger(logger))
	ctx := petstore.WithPrincipal(context.Background(), "alice")
	rex := petstore.NewPet{Name: "Rex", CategoryID: 1}
	stored, _, err := s.Add(ctx, rex, petstore.AddOptions{IdempotencyKey: "k"})
	must(t, err)
	passes := func(n int) func() bool { return func() bool { return len(prunePasses(logs)) >= n } }
	// The first Add starts a pass, which finds nothing to delete.
	eventually(t, "the first pass", passes(1))

	// A second before the retention ends, a pass leaves the key, and it is
	// replayed.
	clock.Advance(retention - time.Second)
	addAnother(t, s)
	eventually(t, "the second pass", passes(2))
	got, replayed, err := s.Add(ctx, rex, petstore.AddOptions{IdempotencyKey: "k"})
	if err != nil || !replayed || got != stored {
		t.Errorf("Add with the key a second before its retention ends = %+v, replayed %v, %v; want %+v replayed", got, replayed, err, stored)
	}
	if n := s.PrunedKeys(); n != 0 {
		t.Errorf("PrunedKeys = %d before the retention ended; want 0", n)
	}

	// A minute after, the next pass deletes it, and it is another key.
	clock.Advance(time.Minute + time.Second)
	eventually(t, "the key to be pruned", func() bool { return s.PrunedKeys() == 1 || addAnother(t, s) })
	if n := pgCount(t, pool, keysTable(s)); n != 0 {
		t.Errorf("the keys table holds %d keys after the retention; want none", n)
	}
	other := petstore.NewPet{Name: "Felix", CategoryID: 2}
	got, replayed, err = s.Add(ctx, other, petstore.AddOptions{IdempotencyKey: "k"})
	if err != nil || replayed || got.NewPet != other || got.ID == stored.ID {
		t.Errorf("Add with the key after its retention = %+v, replayed %v, %v; want a new pet", got, replayed, err)
	}
	lines := prunePasses(logs)
	if last := lines[len(lines)-1]; !strings.Contains(last, "level=DEBUG") || !strings.Contains(last, "deleted=1") {
		t.Errorf("the log line of the pass that deleted the key is %q; want it at debug, with deleted=1", last)
	}
}

// TestKeyRetentionBoundsRows makes keyed creates from several goroutines,
// round after round, with the clock moving a quarter of the retention
// between rounds, and checks that after each round the keys table returns
// to the keys stored within the retention (five rounds' worth), never
// fewer, while the pets all stay.
func TestKeyRetentionBoundsRows(t *testing.T) {
	const (
		rounds, writers, perWriter = 12, 8, 5
		perRound                   = writers * perWriter
		step                       = petstore.MinKeyRetention / 4
		bound                      = 5 * perRound // rounds r-4 to r
	)
	pool := pgPool(t)
	clock := sqltest.NewClock()
	s := pgStore(t, pool, pgstore.WithClock(clock.Now))
	ctx := petstore.WithPrincipal(context.Background(), "alice")
	for r := range rounds {
		var wg sync.WaitGroup
		for w := range writers {
			wg.Go(func() {
				for i := range perWriter {
					p := petstore.NewPet{Name: "Rex", CategoryID: 1}
					if _, replayed, err := s.Add(ctx, p, petstore.AddOptions{IdempotencyKey: fmt.Sprintf("%d-%d-%d", r, w, i)}); err != nil || replayed {
						t.Errorf("round %d, writer %d, Add %d: replayed %v, %v", r, w, i, replayed, err)
						return
					}
				}
			})
		}
		wg.Wait()
		if t.Failed() {
			t.FailNow()
		}
		want := min((r+1)*perRound, bound)
		eventually(t, fmt.Sprintf("round %d: %d keys", r, want), func() bool { return pgCount(t, pool, keysTable(s)) <= want || addAnother(t, s) })
		if n := pgCount(t, pool, keysTable(s)); n != want {
			t.Fatalf("round %d: the keys table holds %d keys; want the %d stored within the retention", r, n, want)
		}
		clock.Advance(step)
	}
	if got, want := s.PrunedKeys(), int64(rounds*perRound-bound); got != want {
		t.Errorf("PrunedKeys = %d; want %d", got, want)
	}
	if pets := pgCount(t, pool, s.Table()+" WHERE name = 'Rex'"); pets != rounds*perRound {
		t.Errorf("%d keyed pets stored; want %d: pruning keys must not touch pets", pets, rounds*perRound)
	}
}
