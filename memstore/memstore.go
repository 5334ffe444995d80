// Package memstore is an in-memory petstore.Store: pets in a slice and
// idempotency keys in a map, under one mutex. Its pets are lost when the
// process exits (sqlitestore and pgstore keep them): use it in tests and in
// development. Make a Store with New, or use the zero Store, and serve it
// with petstore.WithStore. It assigns IDs 1, 2, 3 and so on, never reused;
// the pets that Get and List return are copies.
//
// Add keeps an idempotency key, in the scope of the request's principal
// (petstore.Principal), for the key retention after the Add that stored it:
// 24 hours (petstore.MinKeyRetention), unless WithKeyRetention sets a
// longer one. Expired keys are forgotten a few at each Add, so the keys held
// level off at one retention's worth, however many expire at once.
package memstore

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/internal/wake"
)

// Store is an in-memory petstore.Store. It is safe for concurrent use, and
// its zero value is an empty store ready to use, with the defaults of New's
// options.
type Store struct {
	retention time.Duration    // set by New, like now and log; 0: petstore.MinKeyRetention
	now       func() time.Time // nil: time.Now
	log       *slog.Logger     // nil: none

	mu       sync.RWMutex
	pets     []petstore.Pet               // the pet with ID i+1 at i
	byStatus map[petstore.Status][]int64  // the IDs of the pets with each status, ascending
	keys     map[idempotencyKey]storedKey // the idempotency keys held
	queue    []queuedKey                  // the same keys, the oldest first
	epoch    time.Time                    // the first reading of the clock
	passN    int64                        // keys dropped since the front of queue last had not expired
	pruned   int64                        // keys dropped, ever

	wakes wake.Set // the watchers of NotifyAdds
}

var _ petstore.Store = (*Store)(nil)
var _ petstore.AddNotifier = (*Store)(nil)

// idempotencyKey is an idempotency key in the scope of its principal.
type idempotencyKey struct{ principal, key string }

// storedKey is the ID of a key's pet, and when the key was stored, in
// nanoseconds of the store's clock.
type storedKey struct{ id, at int64 }

// queuedKey is a key in the queue of keys to forget.
type queuedKey struct {
	key idempotencyKey
	storedKey
}

// pruneStep is the most expired keys an Add forgets. Each Add stores at
// most one key, so forgetting up to four keeps ahead of those that arrive.
const pruneStep = 4

// An Option configures a Store made by New.
type Option func(*Store)

// WithKeyRetention sets how long the store keeps an idempotency key after
// the Add that stored it, for a retry to be answered with the first pet.
// The default, and the least, is petstore.MinKeyRetention (24 hours): a
// shorter d is raised to it, as the Store contract requires.
func WithKeyRetention(d time.Duration) Option {
	return func(s *Store) { s.retention = max(d, petstore.MinKeyRetention) }
}

// WithClock sets the clock by which keys age. The default is time.Now; a
// test moves its own clock past the retention to see keys forgotten.
func WithClock(now func() time.Time) Option {
	return func(s *Store) { s.now = now }
}

// WithLogger sets the logger of the store, which logs a line at debug level
// for each pass that forgets keys. The default logs nothing.
func WithLogger(l *slog.Logger) Option {
	return func(s *Store) { s.log = l }
}

// New returns an empty Store with opts applied.
func New(opts ...Option) *Store {
	s := &Store{}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Add stores p under the next ID, or returns an error wrapping
// petstore.ErrInvalidPet, and stores nothing, when p.Validate rejects it.
// An idempotency key is kept, with the ID of its pet, for the key retention
// (see WithKeyRetention), and then forgotten.
func (s *Store) Add(ctx context.Context, p petstore.NewPet, opts petstore.AddOptions) (petstore.Pet, bool, error) {
	if err := ctx.Err(); err != nil {
		return petstore.Pet{}, false, err
	}
	if err := p.Validate(); err != nil {
		return petstore.Pet{}, false, fmt.Errorf("memstore: add pet: %w", err)
	}
	key := idempotencyKey{petstore.Principal(ctx), opts.IdempotencyKey}
	s.mu.Lock()
	defer s.mu.Unlock()
	var now int64
	if key.key != "" || len(s.queue) > 0 { // spare the clock when there are no keys
		now = s.clock()
		s.prune(now)
	}
	if key.key != "" {
		if sk, ok := s.keys[key]; ok && now-sk.at <= int64(s.keyRetention()) {
			stored := s.pets[sk.id-1]
			if stored.NewPet != p {
				return petstore.Pet{}, false, fmt.Errorf("memstore: add pet: %w", petstore.ErrIdempotencyKeyReused)
			}
			return stored, true, nil
		}
	}
	if s.keys == nil { // the zero Store
		s.keys, s.byStatus = map[idempotencyKey]storedKey{}, map[petstore.Status][]int64{}
	}
	pet := petstore.Pet{ID: int64(len(s.pets)) + 1, NewPet: p}
	s.pets = append(s.pets, pet)
	if p.Status != "" {
		s.byStatus[p.Status] = append(s.byStatus[p.Status], pet.ID)
	}
	if key.key != "" {
		key.key = strings.Clone(key.key) // not to hold on to the request's header
		sk := storedKey{id: pet.ID, at: now}
		s.keys[key] = sk
		s.queue = append(s.queue, queuedKey{key, sk})
	}
	s.wakes.Wake()
	return pet, false, nil
}

// NotifyAdds calls wake after each Add that stores a pet, until ctx is
// done (see petstore.AddNotifier).
func (s *Store) NotifyAdds(ctx context.Context, wake func()) { s.wakes.Add(ctx, wake, nil) }

// Get returns the pet with the given ID, or an error wrapping
// petstore.ErrNotFound.
func (s *Store) Get(ctx context.Context, id int64) (petstore.Pet, error) {
	if err := ctx.Err(); err != nil {
		return petstore.Pet{}, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if id < 1 || id > int64(len(s.pets)) {
		return petstore.Pet{}, fmt.Errorf("memstore: pet %d: %w", id, petstore.ErrNotFound)
	}
	return s.pets[id-1], nil
}

// List returns the pets that opts selects, ascending by ID, in a new slice.
func (s *Store) List(ctx context.Context, opts petstore.ListOptions) ([]petstore.Pet, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	after := max(opts.After, 0)
	s.mu.RLock()
	defer s.mu.RUnlock()
	if opts.Status == "" {
		page := s.pets[min(after, int64(len(s.pets))):] // the pet with ID after+1 first
		if opts.Limit > 0 && len(page) > opts.Limit {
			page = page[:opts.Limit]
		}
		return slices.Clone(page), nil
	}
	ids := s.byStatus[opts.Status] // none for an invalid status
	first, found := slices.BinarySearch(ids, after)
	if found {
		first++ // the pet with ID after is not listed
	}
	ids = ids[first:]
	if opts.Limit > 0 && len(ids) > opts.Limit {
		ids = ids[:opts.Limit]
	}
	pets := make([]petstore.Pet, len(ids))
	for i, id := range ids {
		pets[i] = s.pets[id-1]
	}
	return pets, nil
}

// Len returns the number of pets stored.
func (s *Store) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.pets)
}

// PrunedKeys returns the number of idempotency keys that the store has
// forgotten, their retention (see WithKeyRetention) having passed.
func (s *Store) PrunedKeys() int64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.pruned
}

// keyRetention returns the key retention, with its default.
func (s *Store) keyRetention() time.Duration { return max(s.retention, petstore.MinKeyRetention) }

// clock returns the time now by the store's clock, in nanoseconds since
// the store first read it. With time.Now, that is monotonic time: a change
// of the wall clock neither forgets keys early nor keeps them for ever. The
// caller holds s.mu for writing.
func (s *Store) clock() int64 {
	t := time.Now()
	if s.now != nil {
		t = s.now()
	}
	if s.epoch.IsZero() {
		s.epoch = t
	}
	return int64(t.Sub(s.epoch))
}

// prune forgets up to pruneStep keys whose retention has passed at now,
// from the front of the queue, and logs the end of a pass that forgot some.
// The caller holds s.mu for writing.
func (s *Store) prune(now int64) {
	for i := 0; len(s.queue) > 0 && now-s.queue[0].at > int64(s.keyRetention()); i++ {
		if i == pruneStep {
			return // the pass goes on in the next Add
		}
		q := s.queue[0]
		if s.keys[q.key] == q.storedKey { // not stored again since
			delete(s.keys, q.key)
		}
		s.queue[0] = queuedKey{} // let the key's text go; append moves the rest to a new array in time
		s.queue = s.queue[1:]
		s.passN++
		s.pruned++
	}
	if s.passN > 0 && s.log != nil {
		s.log.LogAttrs(context.Background(), slog.LevelDebug, "memstore: forgot idempotency keys past their retention",
			slog.Int64("forgotten", s.passN), slog.Int("held", len(s.keys)), slog.Duration("retention", s.keyRetention()))
	}
	s.passN = 0
}
