package petstoretest

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"

	"github.com/petstore-go/petstore"
)

// OpenFunc opens a Store on one set of data; close releases it (it must
// wait for or end the calls in flight).
type OpenFunc func(t *testing.T) (store petstore.Store, close func() error)

// TestDurability tests a petstore.Store that can be closed and opened again
// on the same data, a file or a database, for what only a reopen can break:
// pets (every field), IDs and idempotency keys survive it, no ID is used
// again after it, and an Add cancelled or interrupted by the close has
// stored its pet with its key, or neither (a store may report an error for
// an Add that it stored, when it cannot know). Its subtests and failures are
// named as TestStore's are; run TestStore on the store too.
//
// newData returns a new, empty set of data (a new file, a new table) and
// the function that opens a Store on it. Each subtest, one after another,
// calls newData once and then open and close several times, never with two
// stores open at once; it closes the store that is open when it ends. open
// may use t to register cleanup. close must return only when no call that
// started before it can still store anything: it waits for the calls in
// flight or ends them. Calls that reach a store after its close has
// returned must return an error. An error from close fails the subtest.
func TestDurability(t *testing.T, newData func(t *testing.T) OpenFunc) {
	t.Helper()
	testClauses(t, durabilityCases, func(r reporter, c clause[*durableT]) {
		t := r.(*testing.T)
		open := newData(t)
		if open == nil {
			t.Fatal("petstoretest: newData returned a nil OpenFunc")
		}
		runDurable(r, func() (petstore.Store, func() error) { return open(t) }, c.test)
	})
}

// runDurable runs test on the set of data that open opens, which must be
// new and empty.
func runDurable(r reporter, open func() (petstore.Store, func() error), test func(*durableT)) {
	dt := &durableT{storeT: &storeT{reporter: r}, open: open}
	defer func() {
		if dt.close != nil {
			if err := dt.close(); err != nil {
				dt.Errorf("closing the store at the end of the clause: %v", err)
			}
		}
	}()
	dt.openStore()
	dt.requireEmpty()
	test(dt)
}

// durableT is the state of one clause of TestDurability: a storeT whose
// store can be closed and opened again.
type durableT struct {
	*storeT
	open  func() (petstore.Store, func() error)
	close func() error // the open store's close; nil when none is open
	opens int          // how many times the store was opened
}

// openStore opens the store and stops the subtest when open returns nil.
func (dt *durableT) openStore() {
	s, closeFn := dt.open()
	if s == nil || closeFn == nil {
		dt.Fatalf("the OpenFunc returned a nil Store or close function (open %d)", dt.opens+1)
	}
	dt.s, dt.close = s, closeFn
	dt.opens++
}

// reopen closes the store and opens it again on the same data.
func (dt *durableT) reopen() {
	closeFn := dt.close
	dt.close = nil
	if err := closeFn(); err != nil {
		dt.Fatalf("closing the store (open %d): %v", dt.opens, err)
	}
	dt.openStore()
}

// durabilityCases are the clauses of TestDurability, the simplest first.
var durabilityCases = []clause[*durableT]{
	{"pets-survive", "Pets survive a reopen: after the store is closed and opened again on the same data, Get and List return every pet added before, every field as Add returned it.", testPetsSurvive},
	{"ids-never-reused", "IDs survive a reopen and are never reused: a pet added after a reopen gets an ID greater than the ID of every pet added before it.", testIDsNeverReused},
	{"keys-survive", "Idempotency keys survive a reopen: after it, a keyed Add by the same principal with an equal NewPet stores nothing and returns the first pet, replayed; with another NewPet it returns an error wrapping ErrIdempotencyKeyReused; under another principal the key is another key.", testKeysSurvive},
	{"add-interrupted", "An Add cancelled or interrupted by the close has stored all or nothing: after a reopen, each Add that returned a pet has stored it with its key, and each that returned an error has stored its pet together with its key, or neither.", testAddInterrupted},
}

// checkPets checks that the store holds exactly want, sorted by ID, through
// List with and without a status filter and through Get; when says when.
func (dt *durableT) checkPets(when string, want []petstore.Pet) {
	dt.diffLists("List(key) "+when, want, append(byStatus(), petstore.ListOptions{})...)
	dt.diffGets(when, want)
}

func testPetsSurvive(dt *durableT) {
	added := byID(dt.add(append(samplePets(), newPets(8)...)...))
	dt.checkPets("before the store was closed", added)
	dt.reopen()
	dt.checkPets("after the store was closed and opened again", added)
	dt.reopen()
	dt.checkPets("after a second reopen", added)
}

func testIDsNeverReused(dt *durableT) {
	const sessions = 4 // the store is opened this many times, and pets added each time
	var all []petstore.Pet
	var greatest int64 // the greatest ID of a pet added in an earlier session
	for session := range sessions {
		for _, p := range dt.addN(5) {
			if session > 0 && p.ID <= greatest {
				dt.Errorf("after reopen %d, Add(%+v) returned ID %d; want an ID greater than %d, the greatest ID that a pet had before", session, p.NewPet, p.ID, greatest)
			}
			all = append(all, p)
		}
		greatest = slices.Max(ids(all))
		dt.reopen()
		got := dt.list(petstore.ListOptions{})
		diff(dt, fmt.Sprintf("IDs that List returns more than once after reopen %d, with their counts", session+1), map[int64]int{}, duplicates(got))
		diff(dt, fmt.Sprintf("List after reopen %d", session+1), byID(all), got)
	}
}

func testKeysSurvive(dt *durableT) {
	rex := petstore.NewPet{Name: "Rex", CategoryID: 3, Status: petstore.StatusAvailable}
	other := petstore.NewPet{Name: "Ünïcødé 名前 🐕", CategoryID: 1<<63 - 1} // no status
	rex1 := dt.firstKeyed("alice", "durable-1", rex)
	other2 := dt.firstKeyed("alice", "durable-2", other)

	dt.reopen()
	dt.wantReplay("after a reopen", "alice", "durable-1", rex, rex1)
	dt.wantReplay("after a reopen", "alice", "durable-2", other, other2)
	dt.wantReused("after a reopen", "alice", "durable-1", other)
	bob, replayed, err := dt.addKeyed("bob", "durable-1", rex)
	switch {
	case err != nil:
		dt.Fatalf("Add by bob with alice's key %q, after a reopen: %v; want a new pet", "durable-1", err)
	case replayed || bob.ID == rex1.ID:
		dt.Errorf("Add by bob with alice's key %q, after a reopen, replayed alice's pet %d: the key came back without its principal", "durable-1", rex1.ID)
	case bob.ID <= max(rex1.ID, other2.ID) || bob.NewPet != rex:
		dt.Errorf("Add by bob with alice's key %q, after a reopen = %+v; want a new pet with the values %+v and an ID greater than %d", "durable-1", bob, rex, max(rex1.ID, other2.ID))
	}
	want := byID([]petstore.Pet{rex1, other2, bob})
	diff(dt, "List after the keyed retries that followed a reopen", want, dt.list(petstore.ListOptions{}))

	dt.reopen()
	dt.wantReplay("after a second reopen", "alice", "durable-1", rex, rex1)
	dt.wantReplay("after a second reopen", "alice", "durable-2", other, other2)
	dt.wantReplay("after a second reopen (the key was first used after the first one)", "bob", "durable-1", rex, bob)
	diff(dt, "List after the keyed retries that followed a second reopen", want, dt.list(petstore.ListOptions{}))
}

// interruptedPrincipal is the principal of the Adds that add-interrupted
// cancels and interrupts.
const interruptedPrincipal = "petstoretest-interrupted"

// an attempt is one keyed Add that add-interrupted may cancel or interrupt,
// and its outcome.
type attempt struct {
	key      string
	p        petstore.NewPet
	pet      petstore.Pet
	replayed bool
	err      error
}

func testAddInterrupted(dt *durableT) {
	var kept []petstore.Pet
	for round := range 2 { // each round: Adds, cancels and a close, a reopen, checks
		attempts := dt.interruptAdds(round)
		dt.openStore()
		kept = append(kept, dt.checkInterrupted(round, kept, attempts)...)
		if dt.Failed() {
			return
		}
	}
}

// interruptAdds makes the keyed Adds of one round, with distinct keys and
// names, from workers goroutines that each call Add again as soon as their
// last one returns, up to maxAdds Adds in all. As every second Add returns,
// it cancels the context of one still in flight; once closeAfter have
// returned, it closes the store while others are in flight, and each
// goroutine makes one more Add at most, which meets the closing store or
// the closed one. It returns every Add made when each has returned and the
// store is closed.
func (dt *durableT) interruptAdds(round int) []*attempt {
	const workers, maxAdds, closeAfter = 8, 200, 32
	s, closeFn := dt.s, dt.close
	dt.close = nil
	ctx := petstore.WithPrincipal(dt.Context(), interruptedPrincipal)

	var (
		mu       sync.Mutex
		attempts []*attempt
		inFlight = map[int]context.CancelFunc{} // by index in attempts
		returned int                            // the Adds that have returned
		closing  bool                           // close has been called
	)
	closed := make(chan error, 1)
	atOnce(workers, func(int) {
		for last := false; !last; {
			mu.Lock()
			i := len(attempts)
			if i == maxAdds {
				mu.Unlock()
				return
			}
			last = closing
			n := fmt.Sprintf("%d-%d", round+1, i+1)
			a := &attempt{key: "interrupted-" + n, p: petstore.NewPet{Name: "interrupted " + n, CategoryID: int64(i + 1), Status: statuses[i%len(statuses)]}}
			actx, cancel := context.WithCancel(ctx)
			attempts = append(attempts, a)
			inFlight[i] = cancel
			mu.Unlock()

			a.pet, a.replayed, a.err = s.Add(actx, a.p, petstore.AddOptions{IdempotencyKey: a.key})
			cancel()

			mu.Lock()
			delete(inFlight, i)
			returned++
			if returned%2 == 0 && len(inFlight) > 0 { // cancel the oldest Add in flight, or the newest
				pick := slices.Sorted(maps.Keys(inFlight))
				if returned%4 != 0 {
					pick = pick[len(pick)-1:]
				}
				inFlight[pick[0]]()
			}
			if returned == closeAfter {
				closing = true
				go func() { closed <- closeFn() }()
			}
			mu.Unlock()
		}
	})
	if err := <-closed; err != nil {
		dt.Fatalf("closing the store while Adds were in flight: %v", err)
	}
	return attempts
}

// checkInterrupted checks, on the store opened again after interruptAdds,
// that each of the attempts has stored all or nothing, and that the pets
// kept from earlier rounds are still there. It returns the pets of the
// attempts, as their keyed retries returned them.
func (dt *durableT) checkInterrupted(round int, kept []petstore.Pet, attempts []*attempt) []petstore.Pet {
	when := fmt.Sprintf("after the close that interrupted round %d of Adds, and a reopen", round+1)
	byName := map[string][]petstore.Pet{}
	for _, p := range dt.list(petstore.ListOptions{}) {
		byName[p.Name] = append(byName[p.Name], p)
	}
	for _, p := range kept {
		if !slices.Contains(byName[p.Name], p) {
			dt.Errorf("%s, the pet %+v of an earlier round is gone", when, p)
		}
	}
	var stored []petstore.Pet
	for _, a := range attempts {
		before := byName[a.p.Name]
		if a.err == nil {
			if a.replayed || a.pet.NewPet != a.p {
				dt.Errorf("the first Add with key %q of %+v returned %+v, replayed %v; want a new pet with those values", a.key, a.p, a.pet, a.replayed)
			}
			diff(dt, fmt.Sprintf("the pets named %q %s; the Add with key %q returned %+v before the close", a.p.Name, when, a.key, a.pet), []petstore.Pet{a.pet}, before)
		}
		pet, replayed, err := dt.addKeyed(interruptedPrincipal, a.key, a.p)
		switch {
		case err != nil:
			dt.Errorf("the keyed retry of the Add with key %q of %+v (which returned %s), %s: %v; want the pet", a.key, a.p, outcome(a.pet, a.err), when, err)
			continue
		case pet.NewPet != a.p:
			dt.Errorf("the keyed retry of the Add with key %q of %+v, %s, returned %+v, replayed %v: a pet with other values", a.key, a.p, when, pet, replayed)
		case a.err == nil && (!replayed || pet != a.pet):
			dt.Errorf("the keyed retry of the Add with key %q, which returned %+v before the close, %s, returned %+v, replayed %v; want that pet, replayed", a.key, a.pet, when, pet, replayed)
		case replayed && !slices.Contains(before, pet):
			dt.Errorf("the keyed retry of the Add with key %q of %+v (which returned %s), %s, replayed %+v, which List did not return: the key was stored without its pet", a.key, a.p, outcome(a.pet, a.err), when, pet)
		case !replayed && len(before) > 0:
			dt.Errorf("the keyed retry of the Add with key %q of %+v (which returned %s), %s, created %+v though List returned %+v: the pet was stored without its key", a.key, a.p, outcome(a.pet, a.err), when, pet, before)
		}
		stored = append(stored, pet)
	}
	diff(dt, fmt.Sprintf("List after the keyed retry of every Add of round %d", round+1), byID(append(slices.Clone(kept), stored...)), dt.list(petstore.ListOptions{}))
	return stored
}
