// Package memstore is an in-memory petstore.Store for tests and development:
// pets in a slice and idempotency keys in a map, under one mutex, lost when
// the process exits (sqlitestore and pgstore keep them). It assigns IDs 1, 2,
// 3 and so on, never reused; the pets that Get and List return are copies.
package memstore

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/internal/wake"
)

// Store is an in-memory petstore.Store, safe for concurrent use. Its zero
// value is an empty store with the defaults of New's options.
type Store struct {
	retention time.Duration    // set by New, like now; 0: petstore.MinKeyRetention
	now       func() time.Time // nil: time.Now

	mu       sync.RWMutex
	recs     []record                     // the pet with ID i+1 at i
	names    []byte                       // the pets' names, end to end
	byStatus map[petstore.Status][]int64  // the IDs of the pets with each status, ascending
	keys     map[idempotencyKey]storedKey // the idempotency keys held
	queue    []queuedKey                  // the same keys, the oldest first
	epoch    time.Time                    // the first reading of the clock
	pruned   int64                        // keys dropped, ever
	wakes    wake.Set                     // the watchers of NotifyAdds, under a lock of their own
}

var _ petstore.Store = (*Store)(nil)
var _ petstore.AddNotifier = (*Store)(nil)

// A record is a pet without a pointer, so that the garbage collector has
// nothing to follow in s.recs: with a slice of Pets, a name string each, a
// get of cmd/petstore over 13,000 pets cost 6% more instructions.
type record struct {
	categoryID int64
	start, end int   // where its name is in names
	status     uint8 // an index in statuses
}

// statuses are the values of a pet's Status, by their index in a record.
var statuses = [...]petstore.Status{"", petstore.StatusAvailable, petstore.StatusPending, petstore.StatusSold}

// idempotencyKey is an idempotency key in the scope of its principal.
type idempotencyKey struct{ principal, key string }

// storedKey is the ID of a key's pet, and when (by clock) it was stored;
// a queuedKey is a key in the queue of keys to forget.
type storedKey struct{ id, at int64 }
type queuedKey struct {
	key idempotencyKey
	storedKey
}

// pruneStep is the most expired keys an Add forgets: more than it stores.
const pruneStep = 4

// An Option configures a Store made by New.
type Option func(*Store)

// WithKeyRetention sets how long the store keeps an idempotency key after its
// Add: at least, and by default, petstore.MinKeyRetention (24 hours).
func WithKeyRetention(d time.Duration) Option {
	return func(s *Store) { s.retention = max(d, petstore.MinKeyRetention) }
}

// WithClock sets the clock by which keys age. The default is time.Now.
func WithClock(now func() time.Time) Option {
	return func(s *Store) { s.now = now }
}

// New returns an empty Store with opts applied.
func New(opts ...Option) *Store {
	s := &Store{}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Add stores p under the next ID (see petstore.Store), and keeps its
// idempotency key for the key retention (see WithKeyRetention).
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
	retention := int64(max(s.retention, petstore.MinKeyRetention))
	if key.key != "" || len(s.queue) > 0 { // spare the clock when there are no keys
		now = s.clock()
		s.prune(now, retention)
	}
	if key.key != "" {
		if sk, ok := s.keys[key]; ok && now-sk.at <= retention {
			stored := s.pet(sk.id)
			if stored.NewPet != p {
				return petstore.Pet{}, false, fmt.Errorf("memstore: add pet: %w", petstore.ErrIdempotencyKeyReused)
			}
			return stored, true, nil
		}
	}
	if s.keys == nil { // the zero Store
		s.keys, s.byStatus = map[idempotencyKey]storedKey{}, map[petstore.Status][]int64{}
	}
	pet := petstore.Pet{ID: int64(len(s.recs)) + 1, NewPet: p}
	r := record{categoryID: p.CategoryID, start: len(s.names), end: len(s.names) + len(p.Name), status: uint8(slices.Index(statuses[:], p.Status))}
	s.names, s.recs = append(s.names, p.Name...), append(s.recs, r)
	if p.Status != "" {
		s.byStatus[p.Status] = append(s.byStatus[p.Status], pet.ID)
	}
	if key.key != "" {
		key.key = strings.Clone(key.key) // not to hold on to the request's header
		s.keys[key] = storedKey{id: pet.ID, at: now}
		s.queue = append(s.queue, queuedKey{key, s.keys[key]})
	}
	s.wakes.Wake()
	return pet, false, nil
}

// NotifyAdds calls wake after each Add that stores a pet, until ctx is done.
func (s *Store) NotifyAdds(ctx context.Context, wake func()) { s.wakes.Add(ctx, wake, nil) }

// Get returns the pet with the given ID (see petstore.Store).
func (s *Store) Get(ctx context.Context, id int64) (petstore.Pet, error) {
	if err := ctx.Err(); err != nil {
		return petstore.Pet{}, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if id < 1 || id > int64(len(s.recs)) {
		return petstore.Pet{}, fmt.Errorf("memstore: pet %d: %w", id, petstore.ErrNotFound)
	}
	return s.pet(id), nil
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
		n := int64(len(s.recs)) - min(after, int64(len(s.recs))) // the pets after ID after
		if opts.Limit > 0 {
			n = min(n, int64(opts.Limit))
		}
		pets := make([]petstore.Pet, n)
		if n > 0 {
			base := s.recs[after].start
			names := string(s.names[base:s.recs[after+n-1].end]) // one string for the page
			for i := range pets {
				r := s.recs[after+int64(i)]
				pets[i] = r.pet(after+1+int64(i), names[r.start-base:r.end-base])
			}
		}
		return pets, nil
	}
	ids := s.byStatus[opts.Status] // none for an invalid status
	ids = ids[sort.Search(len(ids), func(i int) bool { return ids[i] > after }):]
	if opts.Limit > 0 && len(ids) > opts.Limit {
		ids = ids[:opts.Limit]
	}
	return s.page(ids), nil
}

// Len returns the number of pets stored.
func (s *Store) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.recs)
}

// pet returns the stored pet with ID id. The caller holds s.mu.
func (s *Store) pet(id int64) petstore.Pet {
	r := s.recs[id-1]
	return r.pet(id, string(s.names[r.start:r.end]))
}

// page returns the pets with the given IDs, their names in one string.
func (s *Store) page(ids []int64) []petstore.Pet {
	size := 0
	for _, id := range ids {
		size += s.recs[id-1].end - s.recs[id-1].start
	}
	var b strings.Builder
	b.Grow(size)
	for _, id := range ids {
		b.Write(s.names[s.recs[id-1].start:s.recs[id-1].end])
	}
	names, pets := b.String(), make([]petstore.Pet, len(ids))
	for i, id := range ids {
		r := s.recs[id-1]
		pets[i], names = r.pet(id, names[:r.end-r.start]), names[r.end-r.start:]
	}
	return pets
}

// pet returns the pet of r, with ID id and name.
func (r record) pet(id int64, name string) petstore.Pet {
	return petstore.Pet{ID: id, NewPet: petstore.NewPet{Name: name, CategoryID: r.categoryID, Status: statuses[r.status]}}
}

// PrunedKeys returns the number of expired idempotency keys forgotten.
func (s *Store) PrunedKeys() int64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.pruned
}

// clock returns the nanoseconds since the store first read its clock
// (monotonic with time.Now). The caller holds s.mu for writing.
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

// prune forgets up to pruneStep expired keys from the front of the queue.
// The caller holds s.mu for writing.
func (s *Store) prune(now, retention int64) {
	for i := 0; i < pruneStep && len(s.queue) > 0 && now-s.queue[0].at > retention; i++ {
		q := s.queue[0]
		if s.keys[q.key].id == q.id { // not stored again since
			delete(s.keys, q.key)
		}
		s.queue[0] = queuedKey{} // let the key's text go; append moves the rest to a new array in time
		s.queue, s.pruned = s.queue[1:], s.pruned+1
	}
}
