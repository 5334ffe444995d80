// Package memstore is an in-memory petstore.Store. Its pets live in the
// process and are lost when it exits: use it in tests, in development, and
// in services that run as one process and may lose their pets on restart.
// Package sqlitestore and package pgstore keep them.
//
// Make a Store with New, or use the zero Store, and serve it with
// petstore.New:
//
//	store := memstore.New()
//	h, err := petstore.New(
//		petstore.WithStore(store),
//		petstore.WithAuthenticator(petstore.APIKeys(os.Getenv("API_KEY"))),
//	)
//
// A Store is safe for concurrent use. It assigns IDs 1, 2, 3 and so on. As
// the API is append-only, a pet once added never changes and is never
// removed, and its ID is never reused; the Store's memory grows with its
// pets, about 25 bytes a pet beyond its name, with nothing in them for the
// garbage collector to scan, and is given back only when the Store itself
// is dropped. A Get, and a page of a List with or without
// a status filter, cost the same however many pets are stored. The pets
// that Get and List return are copies: changing them changes nothing in
// the Store.
//
// # Idempotency keys
//
// Add keeps an idempotency key, in the scope of the request's principal
// (petstore.Principal), for the key retention after the Add that stored it:
// 24 hours (petstore.MinKeyRetention), unless WithKeyRetention sets a
// longer one. A retry within the retention gets the first pet back; one
// after it stores a new pet. Expired keys are forgotten a few at each Add,
// however many expire at once, and under a steady stream of keyed creates
// the keys held, and their memory, level off at one retention's worth:
// about 140 bytes a key beyond its text. PrunedKeys counts the keys forgotten, and
// WithLogger logs each pass that forgets some at debug level.
//
// Keys age by time.Now. A test that needs a key to expire gives the Store a
// clock of its own with WithClock, and moves it past the retention (see the
// example of WithClock).
package memstore

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/petstore-go/petstore"
)

// Store is an in-memory petstore.Store. It assigns IDs 1, 2, 3 and so on.
// It is safe for concurrent use, and its zero value is an empty store ready
// to use, with the defaults of New's options.
type Store struct {
	// Set by New, read-only afterwards.
	retention time.Duration    // 0: petstore.MinKeyRetention
	now       func() time.Time // nil: time.Now
	log       *slog.Logger     // nil: none

	mu     sync.RWMutex
	chunks []chunk // the pets stored, chunkSize to a chunk
	n      int64   // the number of pets, and the ID of the last
	// byStatus holds the IDs of the pets with each status, ascending, for
	// List to find a page by binary search. Made by the first Add of a pet
	// with a status.
	byStatus map[petstore.Status][]int64
	keys     keys      // the idempotency keys, with the ID of their pet
	epoch    time.Time // the first reading of the clock (see clock)
}

var _ petstore.Store = (*Store)(nil)

// chunkSize is the number of pets in a chunk.
const chunkSize = 1024

// A chunk holds chunkSize pets, or fewer in the last chunk, without a
// pointer for each: a string per pet would be a pointer that the garbage
// collector follows in every cycle (under the server's list load, 11.5 ms
// of CPU a cycle against 1.3 ms without; BENCHMARKS.md). So the names are
// stored end to end: in a byte slice while the chunk fills, which Get and
// List copy names out of, and in one string once it is full, which they
// take names from without a copy. A chunk never moves once made, so an Add
// never copies the pets before it, as growing one slice of every pet would,
// under the lock, every quarter more pets.
type chunk struct {
	filling []byte   // the names, end to end, until the chunk is full
	names   string   // the names, end to end, once the chunk is full
	pets    []record // the pets, in the order of their IDs
}

// A record is a pet in a chunk, but for its ID and its name.
type record struct {
	categoryID int64
	end        uint32 // where the pet's name ends in its chunk's names
	status     uint8  // an index in statuses
}

// statuses are the values of a pet's Status, by their index in a record.
var statuses = [...]petstore.Status{"", petstore.StatusAvailable, petstore.StatusPending, petstore.StatusSold}

// at returns the chunk and the record of the pet with ID id, which is from
// 1 to s.n, and where its name starts in the chunk's names. The caller
// holds s.mu.
func (s *Store) at(id int64) (*chunk, record, uint32) {
	n := uint64(id - 1) // unsigned, so that dividing is shifting
	c, i := &s.chunks[n/chunkSize], n%chunkSize
	start := uint32(0)
	if i > 0 {
		start = c.pets[i-1].end
	}
	return c, c.pets[i], start
}

// pet returns the pet with ID id, which is from 1 to s.n. The caller holds
// s.mu.
func (s *Store) pet(id int64) petstore.Pet {
	c, r, start := s.at(id)
	if len(c.pets) < chunkSize {
		return r.pet(id, string(c.filling[start:r.end]))
	}
	return r.pet(id, c.names[start:r.end])
}

// pets returns the pets with the given IDs, ascending, each from 1 to s.n.
// Those in the chunk still filling, which can only be the last ones, have
// their names copied out in one string. The caller holds s.mu.
func (s *Store) pets(ids []int64) []petstore.Pet {
	pets := make([]petstore.Pet, len(ids))
	var copied string // the filling chunk's names, from the first such pet's
	var from uint32   // where copied starts in them
	for i, id := range ids {
		c, r, start := s.at(id)
		if len(c.pets) == chunkSize {
			pets[i] = r.pet(id, c.names[start:r.end])
			continue
		}
		if copied == "" { // names are never empty
			_, last, _ := s.at(ids[len(ids)-1])
			copied, from = string(c.filling[start:last.end]), start
		}
		pets[i] = r.pet(id, copied[start-from:r.end-from])
	}
	return pets
}

// pet returns the pet of r, with the given ID and name.
func (r record) pet(id int64, name string) petstore.Pet {
	return petstore.Pet{ID: id, NewPet: petstore.NewPet{Name: name, CategoryID: r.categoryID, Status: statuses[r.status]}}
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
	keyed := opts.IdempotencyKey != ""
	var key idempotencyKey
	if keyed {
		key = idempotencyKey{petstore.Principal(ctx), opts.IdempotencyKey}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var now int64
	if keyed || len(s.keys.queue) > 0 { // spare the clock when there are no keys
		now = s.clock()
		s.pruneKeys(now)
	}
	if keyed {
		if id, ok := s.keys.lookup(key, now, s.keyRetention()); ok {
			stored := s.pet(id)
			if stored.NewPet != p {
				return petstore.Pet{}, false, fmt.Errorf("memstore: add pet: %w", petstore.ErrIdempotencyKeyReused)
			}
			return stored, true, nil
		}
	}
	if s.n%chunkSize == 0 {
		room := chunkSize * 8 // for names as long as the last chunk's, most often enough
		if len(s.chunks) > 0 {
			room = len(s.chunks[len(s.chunks)-1].names)
		}
		s.chunks = append(s.chunks, chunk{filling: make([]byte, 0, room), pets: make([]record, 0, chunkSize)})
	}
	s.n++
	pet := petstore.Pet{ID: s.n, NewPet: p}
	c := &s.chunks[len(s.chunks)-1]
	c.filling = append(c.filling, p.Name...)
	c.pets = append(c.pets, record{categoryID: p.CategoryID, end: uint32(len(c.filling)),
		status: uint8(slices.Index(statuses[:], p.Status))})
	if len(c.pets) == chunkSize {
		c.names, c.filling = string(c.filling), nil
	}
	if p.Status != "" {
		if s.byStatus == nil {
			s.byStatus = make(map[petstore.Status][]int64)
		}
		s.byStatus[p.Status] = append(s.byStatus[p.Status], pet.ID)
	}
	if keyed {
		s.keys.add(key, pet.ID, now)
	}
	return pet, false, nil
}

// Get returns the pet with the given ID, or an error wrapping
// petstore.ErrNotFound.
func (s *Store) Get(ctx context.Context, id int64) (petstore.Pet, error) {
	if err := ctx.Err(); err != nil {
		return petstore.Pet{}, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if id < 1 || id > s.n {
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
		// IDs are dense: the page is the pets after+1, after+2, and so on.
		first, last := min(after, s.n)+1, s.n
		if opts.Limit > 0 && last-first >= int64(opts.Limit) {
			last = first + int64(opts.Limit) - 1
		}
		var page [petstore.MaxPageSize + 1]int64 // the most the handler asks for
		ids := page[:0]
		if n := last - first + 1; n > int64(len(page)) {
			ids = make([]int64, 0, n)
		}
		for id := first; id <= last; id++ {
			ids = append(ids, id)
		}
		return s.pets(ids), nil
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
	return s.pets(ids), nil
}

// Len returns the number of pets stored.
func (s *Store) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return int(s.n)
}
