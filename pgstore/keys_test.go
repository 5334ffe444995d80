package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/internal/testkit/sqltest"
	"github.com/petstore-go/petstore/internal/testkit/syncbuf"
	"github.com/petstore-go/petstore/pgstore"
)

// keysTable returns the keys table of s, quoted and qualified.
func keysTable(s *pgstore.Store) string {
	return strings.TrimSuffix(s.Table(), `"`) + `_keys"`
}

// TestAddKeyedBatch queues calls with and without keys behind an Add held
// at the lock, and checks that they go in one batch that answers each as
// the Store contract says: a new key stores its pet; a key stored before,
// or sent by an earlier call of the batch, replays the pet stored under
// it for the same pet and is reported reused for another; the same key
// under another principal is another key. The outcome of one call does not
// fail the others.
func TestAddKeyedBatch(t *testing.T) {
	a := addSetup(t)
	ctx := context.Background()
	rex := petstore.NewPet{Name: "Rex", CategoryID: 1, Status: petstore.StatusAvailable}
	tom := petstore.NewPet{Name: "Tom", CategoryID: 2}
	// Stored before the batch.
	before, _, err := a.s.Add(petstore.WithPrincipal(ctx, "alice"), rex, petstore.AddOptions{IdempotencyKey: "stored"})
	if err != nil {
		t.Fatal(err)
	}

	a.hold(t)
	first := a.add(ctx, "first")
	a.awaitWaiting(t, 1, 0)
	reused := petstore.ErrIdempotencyKeyReused
	calls := []struct {
		principal, key string
		pet            petstore.NewPet
		// The outcome: sameAs is the call whose pet is answered, -1 for
		// the pet stored before.
		replayed bool
		err      error
		sameAs   int
	}{
		{"alice", "new", rex, false, nil, 0},       // stored
		{"", "", tom, false, nil, 1},               // no key: stored
		{"alice", "new", rex, true, nil, 0},        // replays 0
		{"alice", "new", tom, false, reused, 0},    // reuses 0's key
		{"alice", "stored", rex, true, nil, -1},    // replays the pet stored before
		{"alice", "stored", tom, false, reused, 0}, // reuses its key
		{"bob", "new", tom, false, nil, 6},         // another principal: stored
	}
	var results []<-chan addResult
	for i, c := range calls {
		results = append(results, goAdd(ctx, a.s, c.principal, c.key, c.pet)) // "" is no key
		a.awaitWaiting(t, 1, i+1)
	}
	a.release(t)
	if r := <-first; r.err != nil {
		t.Fatal(r.err)
	}
	var got []addResult
	for _, r := range results {
		got = append(got, <-r)
	}
	for i, want := range calls {
		r := got[i]
		if !errors.Is(r.err, want.err) { // for a nil want.err, r.err must be nil
			t.Errorf("call %d: err = %v; want %v", i, r.err, want.err)
			continue
		}
		if want.err != nil {
			continue
		}
		wantPet := before
		if want.sameAs >= 0 {
			wantPet = got[want.sameAs].pet
		}
		if r.replayed != want.replayed || r.pet != wantPet || r.pet.NewPet != want.pet {
			t.Errorf("call %d: Add = %+v, replayed %v; want %+v, replayed %v", i, r.pet, r.replayed, wantPet, want.replayed)
		}
	}
	// New pets in the order of the calls, after the one at the lock.
	if diff := cmp.Diff([]string{"Rex", "first", "Rex", "Tom", "Tom"}, a.stored(t)); diff != "" {
		t.Errorf("stored (-want +got):\n%s", diff)
	}
	if !(got[0].pet.ID < got[1].pet.ID && got[1].pet.ID < got[6].pet.ID) {
		t.Errorf("IDs %d, %d, %d are not in the order of the calls", got[0].pet.ID, got[1].pet.ID, got[6].pet.ID)
	}
	if n := pgCount(t, a.admin, keysTable(a.s)); n != 3 {
		t.Errorf("the keys table holds %d keys; want 3", n)
	}
	// One keyed batch for the queued calls, each key sent once: 7 calls
	// less the 3 that repeat a key of an earlier call of the batch. (The
	// first keyed batch is the Add before the lock was held.)
	if diff := cmp.Diff([]int{1, 4}, a.tracer.keyedSizes()); diff != "" {
		t.Errorf("keyed batch sizes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{1}, a.tracer.addSizes()); diff != "" {
		t.Errorf("batch sizes without keys (-want +got):\n%s", diff)
	}
}

// keyedAwaitLock waits until n statements of the pool whose connections
// carry application wait for an advisory lock.
func keyedAwaitLock(t *testing.T, admin *pgxpool.Pool, application string, n int) {
	t.Helper()
	pgAwait(t, admin, fmt.Sprintf("%d statements to wait for the lock", n), `SELECT count(*) = $2 FROM pg_stat_activity
WHERE application_name = $1 AND wait_event_type = 'Lock' AND wait_event = 'advisory'`, application, n)
}

// TestAddKeyedAcrossStores sends the same key through two Stores on two
// pools, as two processes would, while both wait for the lock: one stores
// the pet and the other replays it, or, for another pet, is told the key
// was reused. Nothing is stored twice.
func TestAddKeyedAcrossStores(t *testing.T) {
	for _, tt := range []struct {
		name   string
		second petstore.NewPet
		err    error
	}{
		{"same pet", petstore.NewPet{Name: "Rex", CategoryID: 1}, nil},
		{"other pet", petstore.NewPet{Name: "Tom", CategoryID: 1}, petstore.ErrIdempotencyKeyReused},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pool, application := appPool(t)
			a := &addTable{s: pgStore(t, pool), admin: pgPool(t)}
			other := pgNew(t, pool, pgstore.WithSchema(strings.Split(a.s.Table(), `"`)[1]))
			ctx := context.Background()
			rex := petstore.NewPet{Name: "Rex", CategoryID: 1}
			a.hold(t)
			r1 := goAdd(ctx, a.s, "alice", "k", rex)
			keyedAwaitLock(t, a.admin, application, 1)
			r2 := goAdd(ctx, other, "alice", "k", tt.second)
			keyedAwaitLock(t, a.admin, application, 2)
			a.release(t)
			got1, got2 := <-r1, <-r2
			if got1.err != nil || got1.replayed || got1.pet.NewPet != rex {
				t.Fatalf("first Add = %+v, replayed %v, %v; want Rex stored", got1.pet, got1.replayed, got1.err)
			}
			if tt.err != nil {
				if !errors.Is(got2.err, tt.err) {
					t.Errorf("second Add = %+v, %v; want %v", got2.pet, got2.err, tt.err)
				}
			} else if got2.err != nil || !got2.replayed || got2.pet != got1.pet {
				t.Errorf("second Add = %+v, replayed %v, %v; want %+v replayed", got2.pet, got2.replayed, got2.err, got1.pet)
			}
			if diff := cmp.Diff([]string{"Rex"}, a.stored(t)); diff != "" {
				t.Errorf("stored (-want +got):\n%s", diff)
			}
		})
	}
}

// TestAddKeyedBatchFails cancels every call of a keyed batch while it
// waits for the lock: no pet and no key is stored, so the same keys store
// their pets afterwards.
func TestAddKeyedBatchFails(t *testing.T) {
	pool, application := appPool(t)
	a := &addTable{s: pgStore(t, pool), admin: pgPool(t)}
	ctx := context.Background()
	a.hold(t)
	blockCtx, unblock := context.WithCancel(ctx)
	blocker := a.add(blockCtx, "blocker")
	a.awaitWaiting(t, 1, 0)
	callCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	pets := []petstore.NewPet{{Name: "Rex", CategoryID: 1}, {Name: "Tom", CategoryID: 2}}
	var results []<-chan addResult
	for i, p := range pets {
		results = append(results, goAdd(callCtx, a.s, "alice", fmt.Sprintf("key %d", i), p))
		a.awaitWaiting(t, 1, i+1)
	}
	unblock()
	if r := <-blocker; !errors.Is(r.err, context.Canceled) {
		t.Fatalf("the blocker's Add = %+v, %v; want it cancelled", r.pet, r.err)
	}
	keyedAwaitLock(t, a.admin, application, 1) // the keyed batch
	cancel()
	for i, r := range results {
		if got := <-r; !errors.Is(got.err, context.Canceled) {
			t.Errorf("call %d: Add = %+v, %v; want an error wrapping context.Canceled", i, got.pet, got.err)
		}
	}
	a.release(t)
	if got := a.stored(t); len(got) != 0 {
		t.Errorf("stored %v; want nothing", got)
	}
	if n := pgCount(t, a.admin, keysTable(a.s)); n != 0 {
		t.Errorf("the keys table holds %d keys; want none", n)
	}
	for i, p := range pets {
		got, replayed, err := a.s.Add(petstore.WithPrincipal(ctx, "alice"), p, petstore.AddOptions{IdempotencyKey: fmt.Sprintf("key %d", i)})
		if err != nil || replayed || got.NewPet != p {
			t.Errorf("Add with key %d again = %+v, replayed %v, %v; want it stored", i, got, replayed, err)
		}
	}
}

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
	if err != nil {
		t.Fatal(err)
	}
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
