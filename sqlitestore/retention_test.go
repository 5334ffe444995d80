package sqlitestore_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/internal/testkit/sqltest"
	"github.com/petstore-go/petstore/sqlitestore"
)

// TestKeyRetention checks that a key is replayed until its retention ends
// and forgotten after it: a create with it then stores a new pet.
func TestKeyRetention(t *testing.T) {
	for _, retention := range []time.Duration{petstore.MinKeyRetention, 72 * time.Hour} {
		t.Run(retention.String(), func(t *testing.T) {
			clk := sqltest.NewClock()
			s := open(t, newPath(t), sqlitestore.WithClock(clk.Now), sqlitestore.WithKeyRetention(retention))
			ctx := petstore.WithPrincipal(context.Background(), "alice")
			a := petstore.NewPet{Name: "A", CategoryID: 1}
			b := petstore.NewPet{Name: "B", CategoryID: 2}
			first, _, err := s.Add(ctx, a, petstore.AddOptions{IdempotencyKey: "k"})
			if err != nil {
				t.Fatal(err)
			}
			clk.Advance(retention - time.Second)
			if got, replayed, err := s.Add(ctx, a, petstore.AddOptions{IdempotencyKey: "k"}); err != nil || !replayed || got != first {
				t.Errorf("a second before the retention ends: %+v, %v, %v; want %+v replayed", got, replayed, err, first)
			}
			if _, _, err := s.Add(ctx, b, petstore.AddOptions{IdempotencyKey: "k"}); !errors.Is(err, petstore.ErrIdempotencyKeyReused) {
				t.Errorf("another pet a second before the retention ends: %v, want ErrIdempotencyKeyReused", err)
			}
			if n := s.PrunedKeys(); n != 0 {
				t.Errorf("PrunedKeys = %d before the retention ended, want 0", n)
			}
			clk.Advance(2 * time.Second)
			second, replayed, err := s.Add(ctx, b, petstore.AddOptions{IdempotencyKey: "k"})
			if err != nil || replayed || second.ID == first.ID {
				t.Errorf("a second after the retention ended: %+v, %v, %v; want a new pet", second, replayed, err)
			}
			if n := s.PrunedKeys(); n != 1 {
				t.Errorf("PrunedKeys = %d, want 1", n)
			}
			if got, replayed, err := s.Add(ctx, b, petstore.AddOptions{IdempotencyKey: "k"}); err != nil || !replayed || got != second {
				t.Errorf("the key used again: %+v, %v, %v; want %+v replayed", got, replayed, err, second)
			}
			if got, err := s.Get(ctx, first.ID); err != nil || got != first {
				t.Errorf("the first pet, its key forgotten: %+v, %v; want it kept", got, err)
			}
		})
	}
}

// TestKeysLevelOff runs creates with new keys while the clock moves ten
// minutes per create: once the retention has passed, the keys table stops
// growing, at what one retention's creates leave, and PrunedKeys counts
// the rest.
func TestKeysLevelOff(t *testing.T) {
	clk := sqltest.NewClock()
	var logs bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s := open(t, newPath(t), sqlitestore.WithClock(clk.Now), sqlitestore.WithLogger(logger))
	const (
		step    = 10 * time.Minute
		perDay  = int64(petstore.MinKeyRetention / step) // keys created within one retention
		creates = 4 * perDay
		callers = 4
	)
	ctx := petstore.WithPrincipal(context.Background(), "alice")
	var most int64
	for i := range creates / callers {
		var wg sync.WaitGroup
		for j := range callers {
			wg.Go(func() {
				key := fmt.Sprintf("key-%d-%d", i, j)
				if _, _, err := s.Add(ctx, petstore.NewPet{Name: key, CategoryID: 1}, petstore.AddOptions{IdempotencyKey: key}); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		clk.Advance(callers * step)
		if n := count(t, s.Path(), "pet_keys"); i*callers >= 2*perDay {
			most = max(most, n)
		}
	}
	rows := count(t, s.Path(), "pet_keys")
	// A key lives one retention, and one batch (callers keys) may be the
	// one that finds it past.
	if bound := perDay + 2*callers; most > bound {
		t.Errorf("the keys table held up to %d rows after two retentions; want at most %d", most, bound)
	}
	if got := s.PrunedKeys(); got != creates-rows {
		t.Errorf("PrunedKeys = %d; want %d, the %d keys created less the %d left", got, creates-rows, creates, rows)
	}
	if n := count(t, s.Path(), "pets"); n != creates {
		t.Errorf("%d pets, want %d: pruning keys must keep their pets", n, creates)
	}
	lines, keys := 0, int64(0)
	for dec := json.NewDecoder(&logs); dec.More(); {
		var line struct {
			Level string
			Keys  int64
		}
		if err := dec.Decode(&line); err != nil {
			t.Fatal(err)
		}
		if line.Level == "DEBUG" {
			lines, keys = lines+1, keys+line.Keys
		}
	}
	if lines == 0 || keys != s.PrunedKeys() {
		t.Errorf("%d debug lines reporting %d keys forgotten; want one per pass, %d keys in all", lines, keys, s.PrunedKeys())
	}
}

// TestPruneInSteps checks that one pass forgets at most 1,000 keys, and
// that the passes catch up on a backlog batch after batch.
func TestPruneInSteps(t *testing.T) {
	clk := sqltest.NewClock()
	path := newPath(t)
	s := open(t, path, sqlitestore.WithClock(clk.Now))
	ctx := context.Background()
	if _, _, err := s.Add(ctx, petstore.NewPet{Name: "first", CategoryID: 1}, petstore.AddOptions{}); err != nil {
		t.Fatal(err)
	}
	// 2,500 old keys, written behind the store's back.
	stamp := clk.Now().UnixMilli()
	execSQL(t, path, fmt.Sprintf(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2500)
INSERT INTO pet_keys (principal, key, pet_id, created_at) SELECT 'p', 'k' || i, 1, %d FROM n`, stamp))
	clk.Advance(petstore.MinKeyRetention + time.Hour)
	for i, want := range []int64{1000, 2000, 2500, 2500} {
		if _, _, err := s.Add(ctx, petstore.NewPet{Name: "next", CategoryID: 1}, petstore.AddOptions{}); err != nil {
			t.Fatal(err)
		}
		if got := s.PrunedKeys(); got != want {
			t.Errorf("after create %d: PrunedKeys = %d, want %d", i+1, got, want)
		}
	}
}
