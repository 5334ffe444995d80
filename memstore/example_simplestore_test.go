package memstore_test

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/petstore-go/petstore"
)

// simpleStore is the plainest store that keeps the whole petstore.Store
// contract: a slice of pets under a read-write mutex, where the pet with ID
// i is pets[i-1], and a map of idempotency keys with a queue of them in the
// order stored, which is also the order in which they expire. Read it before
// memstore.Store, which keeps the same contract in a packed layout that
// costs about 150 more lines and pays only for large stores (see the
// package doc). Its tests run petstoretest.TestStore on it.
type simpleStore struct {
	now func() time.Time // the clock keys age by; time.Now when nil

	mu    sync.RWMutex
	pets  []petstore.Pet
	keys  map[scopedKey]keyedPet
	queue []scopedKey // keys in the order stored: the oldest first
}

var _ petstore.Store = (*simpleStore)(nil)

// scopedKey is an idempotency key in the scope of its principal.
type scopedKey struct{ principal, key string }

// keyedPet is the ID of the pet stored under a key, and when it was stored.
type keyedPet struct {
	id int64
	at time.Time
}

func (s *simpleStore) Add(ctx context.Context, p petstore.NewPet, opts petstore.AddOptions) (petstore.Pet, bool, error) {
	if err := ctx.Err(); err != nil {
		return petstore.Pet{}, false, err
	}
	if err := p.Validate(); err != nil {
		return petstore.Pet{}, false, fmt.Errorf("simplestore: add pet: %w", err)
	}
	k := scopedKey{petstore.Principal(ctx), opts.IdempotencyKey}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	if s.now != nil {
		now = s.now()
	}
	// Forget the keys whose retention has passed: they are at the front.
	for len(s.queue) > 0 && now.Sub(s.keys[s.queue[0]].at) > petstore.MinKeyRetention {
		delete(s.keys, s.queue[0])
		s.queue = s.queue[1:]
	}
	if k.key != "" {
		if kp, ok := s.keys[k]; ok {
			if stored := s.pets[kp.id-1]; stored.NewPet == p {
				return stored, true, nil
			}
			return petstore.Pet{}, false, fmt.Errorf("simplestore: add pet: %w", petstore.ErrIdempotencyKeyReused)
		}
	}
	pet := petstore.Pet{ID: int64(len(s.pets)) + 1, NewPet: p}
	s.pets = append(s.pets, pet)
	if k.key != "" {
		if s.keys == nil {
			s.keys = make(map[scopedKey]keyedPet)
		}
		s.keys[k] = keyedPet{id: pet.ID, at: now}
		s.queue = append(s.queue, k)
	}
	return pet, false, nil
}

func (s *simpleStore) Get(ctx context.Context, id int64) (petstore.Pet, error) {
	if err := ctx.Err(); err != nil {
		return petstore.Pet{}, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if id < 1 || id > int64(len(s.pets)) {
		return petstore.Pet{}, fmt.Errorf("simplestore: pet %d: %w", id, petstore.ErrNotFound)
	}
	return s.pets[id-1], nil // a copy; its name is an immutable string
}

func (s *simpleStore) List(ctx context.Context, opts petstore.ListOptions) ([]petstore.Pet, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	rest := s.pets[min(max(opts.After, 0), int64(len(s.pets))):] // the pets with ID > After
	var page []petstore.Pet
	if opts.Limit > 0 {
		page = make([]petstore.Pet, 0, min(opts.Limit, len(rest)))
	}
	for _, p := range rest {
		if opts.Limit > 0 && len(page) == opts.Limit {
			break
		}
		if opts.Status == "" || p.Status == opts.Status {
			page = append(page, p)
		}
	}
	return page, nil
}

// A store of your own needs no more than simpleStore above: a slice of pets
// under a mutex, and the idempotency keys with their retention. This example
// adds a pet, replays it with its key, and lists the pets.
func Example_simpleStore() {
	s := &simpleStore{}
	ctx := petstore.WithPrincipal(context.Background(), "alice")
	rex := petstore.NewPet{Name: "Rex", CategoryID: 1, Status: petstore.StatusAvailable}
	for range 2 {
		p, replayed, err := s.Add(ctx, rex, petstore.AddOptions{IdempotencyKey: "order-17"})
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("pet %d %s, replayed %v\n", p.ID, p.Name, replayed)
	}
	if _, _, err := s.Add(ctx, petstore.NewPet{Name: "Tom", CategoryID: 2}, petstore.AddOptions{}); err != nil {
		fmt.Println(err)
		return
	}
	pets, err := s.List(ctx, petstore.ListOptions{Limit: 20})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, p := range pets {
		fmt.Printf("%d %s %q\n", p.ID, p.Name, p.Status)
	}
	// Output:
	// pet 1 Rex, replayed false
	// pet 1 Rex, replayed true
	// 1 Rex "available"
	// 2 Tom ""
}
