package sqlitestore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/sqlitestore"
)

// A result is what one call of Add returned.
type result struct {
	pet      petstore.Pet
	replayed bool
	err      error
}

// An addArgs is one call of Add to make.
type addArgs struct {
	principal, key string
	pet            petstore.NewPet
}

func (a addArgs) ctx() context.Context {
	ctx := context.Background()
	if a.principal != "" {
		ctx = petstore.WithPrincipal(ctx, a.principal)
	}
	return ctx
}

// batchBehind makes a lone Add (lead) wait for a write lock held by another
// connection, queues the calls of args behind it, releases the lock, and
// returns what every call got. before, when not nil, runs once the calls
// are queued and before the lock is released.
func batchBehind(t *testing.T, s *sqlitestore.Store, lead addArgs, args []addArgs) (result, []result) {
	t.Helper()
	release := holdWriteLock(t, s.Path())
	var leadResult result
	var wg sync.WaitGroup
	wg.Go(func() {
		p, r, err := s.Add(lead.ctx(), lead.pet, petstore.AddOptions{IdempotencyKey: lead.key})
		leadResult = result{p, r, err}
	})
	waitFor(t, "the lone Add is in flight", func() bool { return sqlitestore.Busy(s) })
	results := make([]result, len(args))
	for i, a := range args {
		wg.Go(func() {
			p, r, err := s.Add(a.ctx(), a.pet, petstore.AddOptions{IdempotencyKey: a.key})
			results[i] = result{p, r, err}
		})
	}
	waitFor(t, "every Add is queued", func() bool { return sqlitestore.Waiting(s) == len(args) })
	release()
	wg.Wait()
	return leadResult, results
}

// TestGroupCommit shows that the Adds that queue while one is in flight are
// written in one transaction, each with its own outcome: new pets, a replay
// of a key committed before, a key reused with another body, a key used
// twice in the batch, the same key under another principal.
func TestGroupCommit(t *testing.T) {
	s := open(t, newPath(t))
	ctx := petstore.WithPrincipal(context.Background(), "alice")
	a := petstore.NewPet{Name: "A", CategoryID: 1, Status: petstore.StatusAvailable}
	b := petstore.NewPet{Name: "B", CategoryID: 2}
	c := petstore.NewPet{Name: "C", CategoryID: 3, Status: petstore.StatusSold}
	first, _, err := s.Add(ctx, a, petstore.AddOptions{IdempotencyKey: "k1"})
	if err != nil {
		t.Fatal(err)
	}
	commits := sqlitestore.Commits(s)

	args := []addArgs{
		{pet: petstore.NewPet{Name: "plain 1", CategoryID: 1}},
		{principal: "alice", key: "k1", pet: a}, // replay of a committed key
		{principal: "alice", key: "k1", pet: b}, // reused with another body
		{principal: "alice", key: "k2", pet: c}, // new key, twice in the batch
		{principal: "alice", key: "k2", pet: c},
		{principal: "bob", key: "k1", pet: b}, // another principal's key
		{pet: petstore.NewPet{Name: "plain 2", CategoryID: 1}},
		{principal: "alice", key: "k3", pet: a}, // a new key, then reused in the batch
		{principal: "alice", key: "k3", pet: b},
	}
	lead, got := batchBehind(t, s, addArgs{pet: petstore.NewPet{Name: "lead", CategoryID: 9}}, args)
	if lead.err != nil {
		t.Fatalf("lead: %v", lead.err)
	}
	if n := sqlitestore.Commits(s) - commits; n != 2 {
		t.Errorf("%d commits for the lone Add and %d queued ones, want 2: one for the lone Add, one for the batch", n, len(args))
	}
	for i, r := range got {
		if r.err != nil && !errors.Is(r.err, petstore.ErrIdempotencyKeyReused) {
			t.Fatalf("call %d (%+v): %v", i, args[i], r.err)
		}
	}
	if got[1].pet != first || !got[1].replayed {
		t.Errorf("replay of k1 = %+v, %v; want %+v, true", got[1].pet, got[1].replayed, first)
	}
	if !errors.Is(got[2].err, petstore.ErrIdempotencyKeyReused) {
		t.Errorf("k1 with another pet: err = %v, want ErrIdempotencyKeyReused", got[2].err)
	}
	if got[3].pet != got[4].pet || got[3].replayed == got[4].replayed || got[3].pet.ID == 0 {
		t.Errorf("k2 twice in one batch: %+v and %+v; want one pet, stored by one call and replayed to the other", got[3], got[4])
	}
	if got[5].err != nil || got[5].replayed || got[5].pet.ID == first.ID {
		t.Errorf("bob's k1: %+v; want a new pet", got[5])
	}
	// The two calls with k3 and different pets queue in either order: the
	// first stores, the second is refused.
	if k3a, k3b := got[7], got[8]; (k3a.err == nil) == (k3b.err == nil) ||
		!errors.Is(errors.Join(k3a.err, k3b.err), petstore.ErrIdempotencyKeyReused) ||
		k3a.replayed || k3b.replayed {
		t.Errorf("k3 twice with two pets in one batch: %+v, %+v; want one new pet and one ErrIdempotencyKeyReused", k3a, k3b)
	}

	// Every pet that a call reported is stored, once, and nothing else.
	want := []petstore.Pet{first, lead.pet}
	for i, r := range got {
		if r.err == nil && !r.replayed {
			want = append(want, r.pet)
			if r.pet.NewPet != args[i].pet {
				t.Errorf("call %d stored %+v, want %+v", i, r.pet.NewPet, args[i].pet)
			}
		}
	}
	if diff := cmp.Diff(len(want), len(all(t, s))); diff != "" {
		t.Errorf("number of pets (-want +got):\n%s", diff)
	}
	for _, p := range want {
		if stored, err := s.Get(ctx, p.ID); err != nil || stored != p {
			t.Errorf("Get(%d) = %+v, %v; want %+v", p.ID, stored, err, p)
		}
	}
}

// TestFailedBatchFailsEveryCall fills the file while a batch is written:
// every call of the batch, the replay among them, gets the error, and none
// of its pets is stored.
func TestFailedBatchFailsEveryCall(t *testing.T) {
	s := open(t, newPath(t))
	ctx := petstore.WithPrincipal(context.Background(), "alice")
	a := petstore.NewPet{Name: "A", CategoryID: 1}
	first, _, err := s.Add(ctx, a, petstore.AddOptions{IdempotencyKey: "k1"})
	if err != nil {
		t.Fatal(err)
	}
	before := all(t, s)
	// Room for the lone Add's small pet, not for the batch's large ones.
	var pages int64
	if err := rawDB(t, s.Path()).QueryRow("PRAGMA page_count").Scan(&pages); err != nil {
		t.Fatal(err)
	}
	if err := sqlitestore.SetMaxPageCount(s, pages+2); err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("\u4e16", petstore.MaxNameLength) // 768 bytes
	args := []addArgs{{principal: "alice", key: "k1", pet: a}}
	for i := range 30 {
		args = append(args, addArgs{pet: petstore.NewPet{Name: big[:len(big)-3] + fmt.Sprint(i%10), CategoryID: 1}})
	}
	args = append(args, addArgs{principal: "alice", key: "k2", pet: a})
	lead, got := batchBehind(t, s, addArgs{pet: petstore.NewPet{Name: "lead", CategoryID: 1}}, args)
	if lead.err != nil {
		t.Fatalf("lead: %v", lead.err)
	}
	for i, r := range got {
		if !errors.Is(r.err, petstore.ErrUnavailable) || !strings.Contains(r.err.Error(), s.Path()) {
			t.Errorf("call %d of the failed batch: %+v; want an error wrapping ErrUnavailable that names %s", i, r, s.Path())
		}
	}
	if diff := cmp.Diff(append(before, lead.pet), all(t, s)); diff != "" {
		t.Errorf("pets after the failed batch (-want +got):\n%s", diff)
	}
	if got := count(t, s.Path(), "pet_keys"); got != 1 {
		t.Errorf("%d keys after the failed batch, want 1", got)
	}
	// With room again, the same calls succeed, and k1 still replays.
	if err := sqlitestore.SetMaxPageCount(s, 1<<30); err != nil {
		t.Fatal(err)
	}
	p, replayed, err := s.Add(ctx, a, petstore.AddOptions{IdempotencyKey: "k1"})
	if err != nil || !replayed || p != first {
		t.Errorf("k1 after the failed batch: %+v, %v, %v; want %+v replayed", p, replayed, err, first)
	}
	add(t, s, big, "") // with room again
}

// TestAddWaitingForLockEndsWithContext shows that a lone Add that waits for
// another process's write lock returns when its context ends, and stores
// nothing.
func TestAddWaitingForLockEndsWithContext(t *testing.T) {
	s := open(t, newPath(t))
	release := holdWriteLock(t, s.Path())
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, _, err := s.Add(ctx, petstore.NewPet{Name: "late", CategoryID: 1}, petstore.AddOptions{})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Add behind a held lock: %v, want context.DeadlineExceeded", err)
	}
	release()
	if pets := all(t, s); len(pets) != 0 {
		t.Errorf("pets = %+v, want none", pets)
	}
	// The writer is usable again.
	add(t, s, "next", "")
}

// TestLockedFileUnavailable shows that an Add that finds the file locked by
// another process for longer than the busy timeout fails with
// ErrUnavailable, naming the file, and stores nothing.
func TestLockedFileUnavailable(t *testing.T) {
	s := open(t, newPath(t))
	if err := sqlitestore.SetBusyTimeout(s, 50*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	release := holdWriteLock(t, s.Path())
	_, _, err := s.Add(context.Background(), petstore.NewPet{Name: "locked out", CategoryID: 1}, petstore.AddOptions{})
	if !errors.Is(err, petstore.ErrUnavailable) || !strings.Contains(err.Error(), s.Path()) {
		t.Errorf("Add to a locked file: %v; want an error wrapping ErrUnavailable that names %s", err, s.Path())
	}
	release()
	if pets := all(t, s); len(pets) != 0 {
		t.Errorf("pets = %+v, want none", pets)
	}
}
