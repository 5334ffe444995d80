package petstoretest

import (
	"errors"
	"sync"

	"github.com/petstore-go/petstore"
)

// addKeyed calls Add with an idempotency key under principal. It stops the
// subtest, with one clear line, when the store says it does not support
// idempotency keys.
func (st *storeT) addKeyed(principal, key string, p petstore.NewPet) (petstore.Pet, bool, error) {
	ctx := petstore.WithPrincipal(st.ctx, principal)
	pet, replayed, err := st.s.Add(ctx, p, petstore.AddOptions{IdempotencyKey: key})
	if errors.Is(err, errors.ErrUnsupported) {
		st.fatalf("the store does not support idempotency keys (Add returned %v); the Store contract requires them", err)
	}
	return pet, replayed, err
}

func testIdempotentReplay(st *storeT) {
	p := petstore.NewPet{Name: "Rex", CategoryID: 3, Status: petstore.StatusAvailable}
	first, replayed, err := st.addKeyed("alice", "key-1", p)
	if err != nil || replayed {
		st.fatalf("first Add with a key = %+v, replayed %v, %v; want the pet, not replayed", first, replayed, err)
	}
	again, replayed, err := st.addKeyed("alice", "key-1", p)
	if err != nil {
		st.fatalf("second Add with the same key and pet: %v", err)
	}
	if again.ID != first.ID {
		st.errorf("second Add with the same key and pet returned ID %d, not the first pet's %d: the store ignores IdempotencyKey", again.ID, first.ID)
	}
	if !replayed {
		st.errorf("second Add with the same key and pet did not report replayed")
	}
	st.diff("the pet that the replay returned", first, again)
	st.diff("List after two Adds with one key", []petstore.Pet{first}, st.list(petstore.ListOptions{}))

	// An invalid pet with a key stores nothing and does not use the key up.
	if _, _, err := st.addKeyed("alice", "key-2", petstore.NewPet{Name: "", CategoryID: 1}); !errors.Is(err, petstore.ErrInvalidPet) {
		st.errorf("Add of an invalid pet with a key: %v, want an error wrapping ErrInvalidPet", err)
	}
	second, replayed, err := st.addKeyed("alice", "key-2", p)
	if err != nil || replayed {
		st.errorf("Add with a key whose only earlier use was an invalid pet = replayed %v, %v; want a new pet", replayed, err)
	}
	st.diff("List after a valid Add with a key first sent with an invalid pet", []petstore.Pet{first, second}, st.list(petstore.ListOptions{}))
}

func testIdempotentReuse(st *storeT) {
	p := petstore.NewPet{Name: "Rex", CategoryID: 3}
	first, _, err := st.addKeyed("alice", "key-1", p)
	if err != nil {
		st.fatalf("first Add with a key: %v", err)
	}
	for _, other := range []petstore.NewPet{
		{Name: "Tom", CategoryID: 3},
		{Name: "Rex", CategoryID: 4},
		{Name: "Rex", CategoryID: 3, Status: petstore.StatusSold},
	} {
		pet, replayed, err := st.addKeyed("alice", "key-1", other)
		if !errors.Is(err, petstore.ErrIdempotencyKeyReused) {
			st.errorf("Add(%+v) with the key of %+v = %+v, replayed %v, %v; want an error wrapping ErrIdempotencyKeyReused", other, p, pet, replayed, err)
		}
	}
	st.diff("List after reusing a key for other pets", []petstore.Pet{first}, st.list(petstore.ListOptions{}))
}

func testIdempotentScope(st *storeT) {
	p := petstore.NewPet{Name: "Rex", CategoryID: 3}
	alice, _, err := st.addKeyed("alice", "shared-key", p)
	if err != nil {
		st.fatalf("Add with a key for alice: %v", err)
	}
	bob, replayed, err := st.addKeyed("bob", "shared-key", p)
	switch {
	case err != nil:
		st.errorf("Add with alice's key for bob: %v; want a new pet", err)
	case replayed || bob.ID == alice.ID:
		st.errorf("Add with alice's key for bob replayed alice's pet %d: keys are not scoped by principal", alice.ID)
	}
	if _, _, err := st.addKeyed("carol", "shared-key", petstore.NewPet{Name: "Other", CategoryID: 1}); err != nil {
		st.errorf("Add of another pet with alice's key for carol: %v; want a new pet", err)
	}
	if n := len(st.list(petstore.ListOptions{})); n != 3 {
		st.errorf("List after one key under three principals holds %d pets, want 3", n)
	}
}

func testIdempotentConcurrent(st *storeT) {
	const n = 16
	p := petstore.NewPet{Name: "Rex", CategoryID: 3}
	ctx := petstore.WithPrincipal(st.ctx, "alice")
	type result struct {
		pet petstore.Pet
		err error
	}
	results := make([]result, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			pet, _, err := st.s.Add(ctx, p, petstore.AddOptions{IdempotencyKey: "once"})
			results[i] = result{pet, err}
		})
	}
	close(start)
	wg.Wait()
	ids := map[int64]int{}
	for i, r := range results {
		switch {
		case r.err == nil:
			ids[r.pet.ID]++
		case !errors.Is(r.err, petstore.ErrIdempotencyKeyInUse):
			st.errorf("Add from goroutine %d: %v; want the pet, or an error wrapping ErrIdempotencyKeyInUse", i, r.err)
		}
	}
	if len(ids) > 1 {
		st.errorf("%d Adds at once with one key returned %d different pets (IDs and counts %v); want one", n, len(ids), ids)
	}
	if got := len(st.list(petstore.ListOptions{})); got != 1 {
		st.errorf("List after %d Adds at once with one key holds %d pets, want 1", n, got)
	}
}
