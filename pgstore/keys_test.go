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

// TestKeyRetention makes keyed creates from several goroutines, round
// after round, with the clock moving a quarter of the retention set with
// WithKeyRetention between rounds. After each round the keys table returns
// to the keys stored within the retention (five rounds' worth), never
// fewer, while the pets all stay, and a key of the oldest round kept is
// replayed. Each round's pass of pruning is logged at debug level, with the
// keys it deleted, and counted; a key it deleted then stores a new pet, and
// a minute past the retention of the oldest keys left, the next pass
// deletes them.
func TestKeyRetention(t *testing.T) {
	const (
		retention                  = 36 * time.Hour
		rounds, writers, perWriter = 12, 8, 5
		perRound                   = writers * perWriter
		step                       = retention / 4
		bound                      = 5 * perRound // rounds r-4 to r
	)
	pool := pgPool(t)
	clock := sqltest.NewClock()
	logs := &syncbuf.Buffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s := pgStore(t, pool, pgstore.WithKeyRetention(retention), pgstore.WithClock(clock.Now), pgstore.WithLogger(logger))
	ctx := petstore.WithPrincipal(context.Background(), "alice")
	rex := petstore.NewPet{Name: "Rex", CategoryID: 1}
	firsts := make([]petstore.Pet, rounds) // the pet of each round's first key
	for r := range rounds {
		var wg sync.WaitGroup
		for w := range writers {
			wg.Go(func() {
				for i := range perWriter {
					pet, replayed, err := s.Add(ctx, rex, petstore.AddOptions{IdempotencyKey: fmt.Sprintf("%d-%d-%d", r, w, i)})
					if err != nil || replayed {
						t.Errorf("round %d, writer %d, Add %d: replayed %v, %v", r, w, i, replayed, err)
						return
					}
					if w == 0 && i == 0 {
						firsts[r] = pet
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
		oldest := max(r-4, 0)
		got, replayed, err := s.Add(ctx, rex, petstore.AddOptions{IdempotencyKey: fmt.Sprintf("%d-0-0", oldest)})
		if err != nil || !replayed || got != firsts[oldest] {
			t.Errorf("round %d: Add with the first key of round %d = %+v, replayed %v, %v; want %+v replayed", r, oldest, got, replayed, err, firsts[oldest])
		}
		clock.Advance(step)
	}
	if got, want := s.PrunedKeys(), int64(rounds*perRound-bound); got != want {
		t.Errorf("PrunedKeys = %d; want %d", got, want)
	}
	if pets := pgCount(t, pool, s.Table()+" WHERE name = 'Rex'"); pets != rounds*perRound {
		t.Errorf("%d keyed pets stored; want %d: pruning keys must not touch pets", pets, rounds*perRound)
	}
	eventually(t, "a logged pass each round", func() bool { return len(prunePasses(logs)) >= rounds })
	if lines := prunePasses(logs); len(lines) != rounds {
		t.Errorf("%d passes logged; want one a round, %d", len(lines), rounds)
	}
	for r, line := range prunePasses(logs) {
		deleted := "deleted=0"
		if r >= 5 {
			deleted = fmt.Sprint("deleted=", perRound)
		}
		if !strings.Contains(line, "level=DEBUG") || !strings.Contains(line, deleted) {
			t.Errorf("the log line of the pass of round %d is %q; want it at debug, with %s", r, line, deleted)
		}
	}
	felix := petstore.NewPet{Name: "Felix", CategoryID: 2}
	got, replayed, err := s.Add(ctx, felix, petstore.AddOptions{IdempotencyKey: "0-0-0"})
	if err != nil || replayed || got.NewPet != felix || got.ID == firsts[0].ID {
		t.Errorf("Add with a key past its retention = %+v, replayed %v, %v; want a new pet", got, replayed, err)
	}
	// A minute past the retention of the oldest keys left, round 8's, the
	// next pass deletes them: rounds 9 to 11 and Felix's key are left.
	clock.Advance(time.Minute + time.Second)
	left := 3*perRound + 1
	eventually(t, "the keys of round 8 to be pruned", func() bool { return pgCount(t, pool, keysTable(s)) <= left || addAnother(t, s) })
	if n := pgCount(t, pool, keysTable(s)); n != left {
		t.Errorf("a minute past the retention of round 8's keys, the keys table holds %d keys; want %d", n, left)
	}
}
