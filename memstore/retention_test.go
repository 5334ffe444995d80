package memstore_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/memstore"
)

// testClock is a clock that a test moves.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func newTestClock() *testClock { return &testClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)} }

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// addKeyed adds a pet named name under key as principal and returns
// whether it was replayed.
func addKeyed(tb testing.TB, s *memstore.Store, principal, key, name string) (petstore.Pet, bool) {
	tb.Helper()
	ctx := petstore.WithPrincipal(context.Background(), principal)
	p, replayed, err := s.Add(ctx, petstore.NewPet{Name: name, CategoryID: 1}, petstore.AddOptions{IdempotencyKey: key})
	if err != nil {
		tb.Fatalf("Add with key %q: %v", key, err)
	}
	return p, replayed
}

// TestKeyRetention: a key is replayed until its retention ends and
// forgotten after it; a forgotten key stores a new pet, which the key then
// replays for a new retention.
func TestKeyRetention(t *testing.T) {
	for _, tc := range []struct {
		name      string
		opts      []memstore.Option
		retention time.Duration
	}{
		{"default", nil, petstore.MinKeyRetention},
		{"longer", []memstore.Option{memstore.WithKeyRetention(48 * time.Hour)}, 48 * time.Hour},
		{"shorter, raised to the least", []memstore.Option{memstore.WithKeyRetention(time.Minute)}, petstore.MinKeyRetention},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := newTestClock()
			s := memstore.New(append(tc.opts, memstore.WithClock(clock.Now))...)
			first, _ := addKeyed(t, s, "alice", "k", "Rex")
			clock.Advance(tc.retention - time.Nanosecond)
			if p, replayed := addKeyed(t, s, "alice", "k", "Rex"); !replayed || p.ID != first.ID {
				t.Errorf("just before the retention ends: pet %d, replayed %v; want pet %d replayed", p.ID, replayed, first.ID)
			}
			clock.Advance(2 * time.Nanosecond)
			second, replayed := addKeyed(t, s, "alice", "k", "Rex")
			if replayed || second.ID == first.ID {
				t.Errorf("just after the retention ends: pet %d, replayed %v; want a new pet", second.ID, replayed)
			}
			// The key now names the new pet, for a retention of its own,
			// even once the first storing of it is pruned.
			clock.Advance(time.Hour)
			addKeyed(t, s, "bob", "other", "Rex") // a step of pruning
			if p, replayed := addKeyed(t, s, "alice", "k", "Rex"); !replayed || p.ID != second.ID {
				t.Errorf("the key stored again: pet %d, replayed %v; want pet %d replayed", p.ID, replayed, second.ID)
			}
			if n := s.PrunedKeys(); n != 1 {
				t.Errorf("PrunedKeys = %d, want 1: the key's first storing", n)
			}
			if mapped, queued := memstore.KeysHeld(s); mapped != 2 || queued != 2 {
				t.Errorf("keys held: %d mapped, %d queued; want 2 and 2", mapped, queued)
			}
		})
	}
}

// TestKeysLevelOff: under a steady stream of unique keys, the keys held
// stay within those of one retention, and one more, once the first
// retention has passed, while every expired key is pruned and counted.
// TestKeysHeapLevelsOff checks the memory they take.
func TestKeysLevelOff(t *testing.T) {
	const (
		every     = 10 * time.Second // a keyed create every 10 s of the clock
		retention = petstore.MinKeyRetention
		perRet    = int(retention / every) // 8,640 keys in one retention
	)
	clock := newTestClock()
	s := memstore.New(memstore.WithClock(clock.Now))
	bound := perRet + 1
	maxHeld := 0
	total := 4 * perRet
	for i := range total {
		addKeyed(t, s, "alice", fmt.Sprintf("key-%08d", i), "Rex")
		clock.Advance(every)
		mapped, queued := memstore.KeysHeld(s)
		if mapped != queued {
			t.Fatalf("after %d creates: %d keys mapped, %d queued; want the same", i+1, mapped, queued)
		}
		if i >= perRet {
			maxHeld = max(maxHeld, mapped)
		}
	}
	t.Logf("%d keyed creates, %d in a retention: at most %d keys held after the first retention (bound %d), %d pruned",
		total, perRet, maxHeld, bound, s.PrunedKeys())
	if maxHeld > bound {
		t.Errorf("up to %d keys held after the first retention, want at most %d", maxHeld, bound)
	}
	mapped, _ := memstore.KeysHeld(s)
	if got, want := s.PrunedKeys(), int64(total-mapped); got != want {
		t.Errorf("PrunedKeys = %d, want %d: every key stored but not held", got, want)
	}
}

// TestKeysHeapLevelsOff: the live heap under a steady stream of keyed creates
// with 255-byte keys grows by the pets alone once the first retention has
// passed, not by the keys.
func TestKeysHeapLevelsOff(t *testing.T) {
	if testing.Short() {
		t.Skip("fills a store with 3 retentions of keys")
	}
	const (
		every  = 10 * time.Second
		perRet = int(petstore.MinKeyRetention / every)
	)
	clock := newTestClock()
	s := memstore.New(memstore.WithClock(clock.Now))
	i := 0
	heapAfter := func(n int) uint64 {
		for ; i < n; i++ {
			addKeyed(t, s, "alice", fmt.Sprintf("%0255d", i), "Rex")
			clock.Advance(every)
		}
		var m runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	one := heapAfter(2 * perRet)
	two := heapAfter(4 * perRet)
	runtime.KeepAlive(s)
	// The pets of the second stretch cost 48 bytes each, twice that while
	// their slice grows, the keys they bring about 450: the heap may grow by
	// the pets and some slack, never by a retention's worth of keys.
	growth := int64(two) - int64(one)
	limit := int64(2*perRet*2*int(unsafe.Sizeof(petstore.Pet{}))) + 1<<20
	t.Logf("heap after 2 retentions %d B, after 4 %d B: %+d B for %d more pets", one, two, growth, 2*perRet)
	if growth > limit {
		t.Errorf("the heap grew by %d B over two more retentions of keyed creates, want at most %d", growth, limit)
	}
}

// TestPruneSteps: an Add forgets at most four expired keys, so a pass over
// 10 goes on over three Adds.
func TestPruneSteps(t *testing.T) {
	clock := newTestClock()
	s := memstore.New(memstore.WithClock(clock.Now))
	for i := range 10 {
		addKeyed(t, s, "alice", fmt.Sprint("k", i), "Rex")
	}
	clock.Advance(petstore.MinKeyRetention + time.Second)
	for _, want := range []int64{4, 8, 10} {
		if _, _, err := s.Add(context.Background(), petstore.NewPet{Name: "Rex", CategoryID: 1}, petstore.AddOptions{}); err != nil {
			t.Fatal(err)
		}
		if n := s.PrunedKeys(); n != want {
			t.Errorf("PrunedKeys = %d, want %d", n, want)
		}
	}
}

// TestZeroValueKeys: the zero Store keeps keys for the default retention,
// by the real clock.
func TestZeroValueKeys(t *testing.T) {
	var s memstore.Store
	first, _ := addKeyed(t, &s, "alice", "k", "Rex")
	again, replayed := addKeyed(t, &s, "alice", "k", "Rex")
	if diff := cmp.Diff(first, again); !replayed || diff != "" {
		t.Errorf("the same key again: replayed %v (-want +got):\n%s", replayed, diff)
	}
	ctx := petstore.WithPrincipal(context.Background(), "alice")
	if _, _, err := s.Add(ctx, petstore.NewPet{Name: "Max", CategoryID: 1}, petstore.AddOptions{IdempotencyKey: "k"}); !errors.Is(err, petstore.ErrIdempotencyKeyReused) {
		t.Errorf("the same key with another pet: %v, want ErrIdempotencyKeyReused", err)
	}
}
