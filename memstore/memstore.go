// Package memstore is an in-memory petstore.Store, for tests, development
// and services that run as a single process and may lose their pets on
// restart.
//
// Pets are held in ID order in fixed-size chunks, so a pet costs a few dozen
// bytes plus its name and adding one never copies the others; beside them,
// one ascending list of IDs per status serves filtered listing. Every List
// is a direct index or a binary search followed by a copy of the page: its
// cost does not grow with the number of pets stored.
package memstore

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/petstore-go/petstore"
)

// chunkSize is the number of pets in a full chunk.
const chunkSize = 4096

// Store is an in-memory petstore.Store. It assigns IDs 1, 2, 3 and so on.
// It is safe for concurrent use, and its zero value is an empty store ready
// to use.
type Store struct {
	mu       sync.RWMutex
	n        int64              // pets stored; the last ID assigned
	chunks   [][]entry          // pet with ID i is chunks[(i-1)/chunkSize][(i-1)%chunkSize]
	byStatus [numStatus][]int64 // IDs of the pets with each status, ascending
}

// New returns an empty Store.
func New() *Store { return &Store{} }

// entry is a stored pet: its ID is its position.
type entry struct {
	name     string
	category int64
	status   status
}

// status is a petstore.Status in one byte.
type status uint8

const (
	noStatus status = iota
	available
	pending
	sold
	numStatus
)

func statusOf(s petstore.Status) status {
	switch s {
	case petstore.StatusAvailable:
		return available
	case petstore.StatusPending:
		return pending
	case petstore.StatusSold:
		return sold
	}
	return noStatus
}

var statusNames = [numStatus]petstore.Status{"", petstore.StatusAvailable, petstore.StatusPending, petstore.StatusSold}

func (e *entry) pet(id int64) petstore.Pet {
	return petstore.Pet{ID: id, NewPet: petstore.NewPet{Name: e.name, CategoryID: e.category, Status: statusNames[e.status]}}
}

// at returns the entry of the pet with the given ID, which must exist.
func (s *Store) at(id int64) *entry {
	i := id - 1
	return &s.chunks[i/chunkSize][i%chunkSize]
}

// Add stores p under the next ID. A Status other than the three valid ones
// is stored as no status.
func (s *Store) Add(ctx context.Context, p petstore.NewPet) (petstore.Pet, error) {
	if err := ctx.Err(); err != nil {
		return petstore.Pet{}, err
	}
	e := entry{name: p.Name, category: p.CategoryID, status: statusOf(p.Status)}
	s.mu.Lock()
	defer s.mu.Unlock()
	last := len(s.chunks) - 1
	if last < 0 || len(s.chunks[last]) == chunkSize {
		s.chunks = append(s.chunks, make([]entry, 0, 16))
		last++
	}
	c := s.chunks[last]
	if len(c) == cap(c) {
		// Grow the last chunk by doubling, up to its full size.
		c = append(make([]entry, 0, min(2*cap(c), chunkSize)), c...)
	}
	s.chunks[last] = append(c, e)
	s.n++
	if e.status != noStatus {
		s.byStatus[e.status] = append(s.byStatus[e.status], s.n)
	}
	return e.pet(s.n), nil
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
	return s.at(id).pet(id), nil
}

// List returns the pets that opts selects, ascending by ID.
func (s *Store) List(ctx context.Context, opts petstore.ListOptions) ([]petstore.Pet, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	after := max(opts.After, 0)
	s.mu.RLock()
	defer s.mu.RUnlock()
	if opts.Status == "" {
		n := s.n - min(after, s.n)
		if opts.Limit > 0 {
			n = min(n, int64(opts.Limit))
		}
		pets := make([]petstore.Pet, n)
		for i := range pets {
			id := after + 1 + int64(i)
			pets[i] = s.at(id).pet(id)
		}
		return pets, nil
	}
	st := statusOf(opts.Status)
	if st == noStatus {
		return nil, nil // an invalid filter selects nothing
	}
	ids := s.byStatus[st]
	start, found := slices.BinarySearch(ids, after)
	if found {
		start++ // the pet with ID after is not listed
	}
	ids = ids[start:]
	if opts.Limit > 0 && len(ids) > opts.Limit {
		ids = ids[:opts.Limit]
	}
	pets := make([]petstore.Pet, len(ids))
	for i, id := range ids {
		pets[i] = s.at(id).pet(id)
	}
	return pets, nil
}

// Len returns the number of pets stored.
func (s *Store) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return int(s.n)
}
