package petstoretest_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/petstore-go/petstore"
)

// brokenStore is a simple petstore.Store with one deliberate bug, named by
// bug; with the bug "none" it keeps the whole contract. Each bug is one that
// a real implementation could have.
type brokenStore struct {
	bug  string
	mu   sync.Mutex
	pets []petstore.Pet             // in ascending order of ID
	last int64                      // the last ID assigned
	next atomic.Int64               // the last ID drawn, for the bugs id-before-lock and id-unguarded
	keys map[[2]string]petstore.Pet // by principal and idempotency key

	wakes []wakeCall // of NotifyAdds
}

var _ petstore.AddNotifier = (*brokenStore)(nil)

// brokenStoreBugs are the bugs that brokenStore knows.
var brokenStoreBugs = []string{
	"none",
	"duplicate-ids",          // IDs wrap around after 5
	"non-positive-ids",       // IDs start at 0
	"limit-ignored",          // List returns every pet selected
	"limit-off-by-one",       // List returns Limit+1 pets
	"after-inclusive",        // List selects ID >= After
	"status-ignored",         // List ignores the Status filter
	"no-status-under-filter", // List returns pets without a status under any filter
	"wrong-order",            // List returns pets in descending order of ID
	"missing-zero-value",     // Get of an unknown ID returns Pet{}, nil
	"not-found-unwrapped",    // Get of an unknown ID returns an error of its own
	"status-dropped",         // Add does not store the Status
	"category-truncated",     // Add stores CategoryID in 32 bits
	"context-ignored",        // no method looks at its context
	"aliasing",               // List returns a slice of the store's own array
	"id-unguarded",           // Add reads and writes the ID counter without the lock
	"no-validation",          // Add stores any NewPet
	"id-before-lock",         // Add draws the ID before it takes the lock that makes the pet visible
	"key-ignored",            // Add ignores the idempotency key: every retry creates again
	"key-unscoped",           // idempotency keys are not scoped by principal
	"key-body-unchecked",     // a key sent with another pet replays the first pet
	"wake-late",              // Add wakes the callers of NotifyAdds after it returns
}

func newBrokenStore(bug string) (*brokenStore, error) {
	if !slices.Contains(brokenStoreBugs, bug) {
		return nil, fmt.Errorf("no broken store has the bug %q", bug)
	}
	return &brokenStore{bug: bug}, nil
}

func (s *brokenStore) lock() (unlock func()) {
	s.mu.Lock()
	return s.mu.Unlock
}

func (s *brokenStore) ctxErr(ctx context.Context) error {
	if s.bug == "context-ignored" {
		return nil
	}
	return ctx.Err()
}

func (s *brokenStore) Add(ctx context.Context, p petstore.NewPet, opts petstore.AddOptions) (petstore.Pet, bool, error) {
	if err := s.ctxErr(ctx); err != nil {
		return petstore.Pet{}, false, err
	}
	if err := p.Validate(); err != nil && s.bug != "no-validation" {
		return petstore.Pet{}, false, err
	}
	if s.bug == "id-before-lock" && opts.IdempotencyKey == "" {
		return s.addDrawnID(p), false, nil
	}
	if s.bug == "id-unguarded" && opts.IdempotencyKey == "" {
		return s.addUnguardedID(p), false, nil
	}
	defer s.lock()()
	key := [2]string{petstore.Principal(ctx), opts.IdempotencyKey}
	if s.bug == "key-unscoped" {
		key[0] = ""
	}
	if stored, ok := s.keys[key]; ok && opts.IdempotencyKey != "" && s.bug != "key-ignored" {
		if stored.NewPet != p && s.bug != "key-body-unchecked" {
			return petstore.Pet{}, false, fmt.Errorf("brokenstore: %w", petstore.ErrIdempotencyKeyReused)
		}
		return stored, true, nil
	}
	pet := s.add(p)
	if opts.IdempotencyKey != "" {
		if s.keys == nil {
			s.keys = map[[2]string]petstore.Pet{}
		}
		s.keys[key] = pet
	}
	s.wake()
	return pet, false, nil
}

// wake wakes the callers of NotifyAdds after an Add. The caller holds the
// lock.
func (s *brokenStore) wake() {
	for _, w := range s.wakes {
		switch {
		case w.ctx.Err() != nil:
		case s.bug == "wake-late":
			time.AfterFunc(time.Second, w.wake)
		default:
			w.wake()
		}
	}
}

// A wakeCall is a caller of NotifyAdds.
type wakeCall struct {
	ctx  context.Context
	wake func()
}

// NotifyAdds calls wake at each Add that stores a pet, until ctx is done.
func (s *brokenStore) NotifyAdds(ctx context.Context, wake func()) {
	defer s.lock()()
	s.wakes = append(s.wakes, wakeCall{ctx, wake})
}

// add stores p under the next ID. The caller holds the lock.
func (s *brokenStore) add(p petstore.NewPet) petstore.Pet {
	s.last++
	id := s.last
	switch s.bug {
	case "duplicate-ids":
		id = (s.last-1)%5 + 1
	case "non-positive-ids":
		id = s.last - 1
	case "status-dropped":
		p.Status = ""
	case "category-truncated":
		p.CategoryID = int64(int32(p.CategoryID))
	}
	pet := petstore.Pet{ID: id, NewPet: p}
	s.pets = append(s.pets, pet)
	return pet
}

// addDrawnID adds p the way a database store does with a sequence: it
// draws the ID first and inserts the pet later, under the lock, at its
// place in ID order. Between the two, another Add can draw a greater ID and
// insert its pet first, and a List in that gap returns the greater ID
// before the smaller one exists.
func (s *brokenStore) addDrawnID(p petstore.NewPet) petstore.Pet {
	pet := petstore.Pet{ID: s.next.Add(1), NewPet: p}
	runtime.Gosched() // where a database store waits for its connection
	defer s.lock()()
	i, _ := slices.BinarySearchFunc(s.pets, pet.ID, func(p petstore.Pet, id int64) int { return cmp.Compare(p.ID, id) })
	s.pets = slices.Insert(s.pets, i, pet)
	s.wake()
	return pet
}

// addUnguardedID adds p under an ID that it reads from the counter and
// writes back without holding the lock, as a store that forgot to guard its
// counter does: two Adds at once can get the same ID. (The counter is
// atomic, so that the race detector does not end the test that hosts the
// bug; the lost update is the bug.)
func (s *brokenStore) addUnguardedID(p petstore.NewPet) petstore.Pet {
	id := s.next.Load() + 1
	runtime.Gosched() // where another Add reads the same counter
	s.next.Store(id)
	pet := petstore.Pet{ID: id, NewPet: p}
	defer s.lock()()
	s.pets = append(s.pets, pet)
	s.wake()
	return pet
}

func (s *brokenStore) Get(ctx context.Context, id int64) (petstore.Pet, error) {
	if err := s.ctxErr(ctx); err != nil {
		return petstore.Pet{}, err
	}
	defer s.lock()()
	for _, p := range s.pets {
		if p.ID == id {
			return p, nil
		}
	}
	switch s.bug {
	case "missing-zero-value":
		return petstore.Pet{}, nil
	case "not-found-unwrapped":
		return petstore.Pet{}, errors.New("brokenstore: pet not found")
	}
	return petstore.Pet{}, fmt.Errorf("brokenstore: pet %d: %w", id, petstore.ErrNotFound)
}

func (s *brokenStore) List(ctx context.Context, opts petstore.ListOptions) ([]petstore.Pet, error) {
	if err := s.ctxErr(ctx); err != nil {
		return nil, err
	}
	defer s.lock()()
	limit := opts.Limit
	switch s.bug {
	case "limit-ignored":
		limit = 0
	case "limit-off-by-one":
		if limit > 0 {
			limit++
		}
	case "aliasing":
		if opts.Status == "" {
			// The pets are in ID order: return a window of the array.
			start := 0
			for start < len(s.pets) && s.pets[start].ID <= opts.After {
				start++
			}
			end := len(s.pets)
			if limit > 0 {
				end = min(end, start+limit)
			}
			return s.pets[start:end], nil
		}
	}
	var out []petstore.Pet
	for _, p := range s.pets {
		switch {
		case s.bug == "after-inclusive" && p.ID < opts.After,
			s.bug != "after-inclusive" && p.ID <= opts.After:
			continue
		case opts.Status == "" || s.bug == "status-ignored":
		case s.bug == "no-status-under-filter" && p.Status == "":
		case p.Status != opts.Status:
			continue
		}
		out = append(out, p)
	}
	if s.bug == "wrong-order" {
		slices.Reverse(out)
	}
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}
