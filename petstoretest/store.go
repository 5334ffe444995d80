package petstoretest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petstore-go/petstore"
)

// TestStore tests a petstore.Store against the contract in the doc comment
// of petstore.Store, one subtest per clause, named after it, each on a
// store from newStore. A failure names the clause and the sentence of the
// contract that the store broke. The simplest clauses run first, so the
// first failure shown is the one to fix first.
//
// newStore must return a new, empty store each time; it may use t to
// register cleanup. The subtests run one after another, so a newStore that
// empties one shared database is fine. The IDs of a new store need not
// start at 1.
//
// The clauses about concurrent use add about 1,000 pets from as many
// goroutines as GOMAXPROCS lets run in parallel; with GOMAXPROCS 1 they
// miss a store that makes pets visible in another order than their IDs.
func TestStore(t *testing.T, newStore func(t *testing.T) petstore.Store) {
	t.Helper()
	testClauses(t, storeCases, func(r reporter, c clause[*storeT]) { runStore(r, newStore(r.(*testing.T)), c.test) })
}

// CheckStore is the core of TestStore: it checks the stores that newStore
// returns, one new, empty store for each clause, and returns an error for
// each clause that failed, joined, or nil. Each error names its clause, as
// in petstoretest: clause "ids-unique" failed: ...
func CheckStore(newStore func() (petstore.Store, error)) error {
	return checkStore(newStore, storeCases)
}

func checkStore(newStore func() (petstore.Store, error), cases []clause[*storeT]) error {
	return checkClauses(cases, func(r reporter, c clause[*storeT]) {
		s, err := newStore()
		if err != nil {
			r.Fatalf("newStore: %v", err)
		}
		runStore(r, s, c.test)
	})
}

// runStore runs test on s, which must be new and empty.
func runStore(r reporter, s petstore.Store, test func(*storeT)) {
	if s == nil {
		r.Fatalf("newStore returned a nil Store")
	}
	st := &storeT{reporter: r, s: s}
	st.requireEmpty()
	test(st)
}

// storeT is the state of one clause of TestStore, which reports its
// failures to the reporter.
type storeT struct {
	reporter
	s petstore.Store
}

// atOnce calls f(0) to f(n-1) from n goroutines, released together, and
// returns when every call has returned.
func atOnce(n int, f func(i int)) {
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			f(i)
		})
	}
	close(start)
	wg.Wait()
}

// requireEmpty stops the subtest when newStore did not return an empty
// store: every clause is checked against pets that the subtest added.
func (st *storeT) requireEmpty() {
	if pets := st.list(petstore.ListOptions{}); len(pets) > 0 {
		st.Fatalf("newStore returned a store that holds %d pets; it must return an empty one", len(pets))
	}
}

// add adds each pet and returns them as Add returned them. It stops the
// subtest when Add fails.
func (st *storeT) add(pets ...petstore.NewPet) []petstore.Pet {
	added := make([]petstore.Pet, 0, len(pets))
	for _, p := range pets {
		got, _, err := st.s.Add(st.Context(), p, petstore.AddOptions{})
		if err != nil {
			st.Fatalf("Add(%+v): %v", p, err)
		}
		added = append(added, got)
	}
	return added
}

func (st *storeT) addN(n int) []petstore.Pet { return st.add(newPets(n)...) }

// diffGets checks that Get returns each of want; when says when.
func (st *storeT) diffGets(when string, want []petstore.Pet) {
	for _, p := range want {
		got, err := st.s.Get(st.Context(), p.ID)
		if err != nil {
			st.Errorf("Get(%d) %s: %v; want %+v", p.ID, when, err, p)
			continue
		}
		diff(st, fmt.Sprintf("Get(%d) %s", p.ID, when), p, got)
	}
}

// list calls List and stops the subtest when it fails.
func (st *storeT) list(opts petstore.ListOptions) []petstore.Pet {
	pets, err := st.s.List(st.Context(), opts)
	if err != nil {
		st.Fatalf("List(%+v): %v", opts, err)
	}
	return pets
}

// statuses is every status a pet can have, none included.
var statuses = append([]petstore.Status{""}, petstore.Statuses()...)

// newPets returns n valid pets whose statuses cycle through statuses, so
// that every status and none is present once n >= 4.
func newPets(n int) []petstore.NewPet {
	pets := make([]petstore.NewPet, n)
	for i := range pets {
		pets[i] = petstore.NewPet{Name: fmt.Sprintf("pet %d", i+1), CategoryID: int64(i%3 + 1), Status: statuses[(i+1)%len(statuses)]}
	}
	return pets
}

// samplePets returns pets whose fields are hard to store faithfully: names
// with non-ASCII text, quotes, backslashes and the longest allowed length,
// the smallest and largest category IDs, and every status and none.
func samplePets() []petstore.NewPet {
	return []petstore.NewPet{
		{Name: "Rex", CategoryID: 1, Status: petstore.StatusAvailable},
		{Name: "Ünïcødé 名前 🐕", CategoryID: 1<<63 - 1, Status: petstore.StatusPending},
		{Name: " leading and trailing spaces ", CategoryID: 2, Status: petstore.StatusSold},
		{Name: `quote " backslash \ percent % apostrophe ' <b>&amp;</b>`, CategoryID: 1 << 40},
		{Name: "Robert'); DROP TABLE pets;--", CategoryID: 1<<31 + 1, Status: petstore.StatusAvailable},
		{Name: strings.Repeat("𝄞", petstore.MaxNameLength), CategoryID: 1<<63 - 2},
	}
}

// byID returns a copy of pets sorted by ID.
func byID(pets []petstore.Pet) []petstore.Pet {
	return slices.SortedFunc(slices.Values(pets), func(a, b petstore.Pet) int { return cmp.Compare(a.ID, b.ID) })
}

// selectPets returns what List(opts) must return when the store holds
// exactly want, sorted by ID.
func selectPets(want []petstore.Pet, opts petstore.ListOptions) []petstore.Pet {
	sel := slices.DeleteFunc(slices.Clone(want), func(p petstore.Pet) bool { return !selects(opts, p) })
	if opts.Limit > 0 && len(sel) > opts.Limit {
		return sel[:opts.Limit]
	}
	return sel
}

// selects reports whether List(opts) may return p: whether p's ID is
// greater than After and p has the status, when opts has one.
func selects(opts petstore.ListOptions, p petstore.Pet) bool {
	return p.ID > opts.After && (opts.Status == "" || p.Status == opts.Status)
}

// mayReturn reports whether List(opts) may return page, whatever else the
// store holds: pets that it selects, ascending by ID, at most Limit.
func mayReturn(opts petstore.ListOptions, page []petstore.Pet) bool {
	selected := !slices.ContainsFunc(page, func(p petstore.Pet) bool { return !selects(opts, p) })
	return selected && ascending(page) && (opts.Limit == 0 || len(page) <= opts.Limit)
}

func ids(pets []petstore.Pet) []int64 {
	out := make([]int64, len(pets))
	for i, p := range pets {
		out[i] = p.ID
	}
	return out
}

// ascending reports whether the IDs of pets strictly ascend.
func ascending(pets []petstore.Pet) bool {
	ids := ids(pets)
	return slices.IsSorted(ids) && len(slices.Compact(ids)) == len(ids)
}

// duplicates returns the IDs that occur more than once in pets, with their
// counts.
func duplicates(pets []petstore.Pet) map[int64]int {
	n := make(map[int64]int, len(pets))
	for _, p := range pets {
		n[p.ID]++
	}
	maps.DeleteFunc(n, func(_ int64, count int) bool { return count == 1 })
	return n
}

// outcome describes the result of a call for a diff: the error when there is
// one, else the value.
func outcome(v any, err error) string {
	if err != nil {
		return "error: " + err.Error()
	}
	return fmt.Sprintf("no error, returned %+v", v)
}

// storeCases is the Store contract, one clause per case, the simplest
// first, so that the first failure TestStore shows is the one to fix first.
var storeCases = []clause[*storeT]{
	// Adding and listing: the clauses that every other test relies on.
	{"ids-positive", "Add assigns each pet an ID that is positive.", testIDsPositive},
	{"ids-unique", "Add assigns each pet an ID that is unique within the store.", testIDsUnique},
	{"list-ascending", "List returns the pets in ascending order of ID.", testListAscending},
	{"round-trip", "Add stores and returns the pet exactly as given (every field, any valid UTF-8 name) together with its ID; Get and List return the same values.", testRoundTrip},

	// Get, validation and aliasing.
	{"get-unknown", "Get returns an error wrapping ErrNotFound for an ID that no pet has, including IDs that are zero or negative.", testGetUnknown},
	{"add-invalid", "For a NewPet that NewPet.Validate rejects, Add stores nothing and returns an error wrapping ErrInvalidPet.", testAddInvalid},
	{"idempotent-replay", "With AddOptions.IdempotencyKey, a second Add of an equal NewPet by the same principal stores nothing and returns the pet stored first, replayed; an invalid pet does not use a key up.", testIdempotentReplay},
	{"idempotent-reuse", "An idempotency key sent again by the same principal with another NewPet stores nothing and gives an error wrapping ErrIdempotencyKeyReused.", testIdempotentReuse},
	{"idempotent-scope", "The same idempotency key under another principal (petstore.Principal of the context) is another key.", testIdempotentScope},
	{"no-alias", "Returned values never alias stored ones, so a caller may keep or change them.", testNoAlias},

	// Selecting with ListOptions.
	{"list-limit", "List returns at most ListOptions.Limit pets, the first ones of those selected.", testListLimit},
	{"list-after", "List returns the pets with ID greater than ListOptions.After, and no others.", testListAfter},
	{"list-status", "When ListOptions.Status is set, List returns only the pets with that status, and all of them.", testListStatus},
	{"list-status-none", "A pet without a status is never returned under a filter.", testListStatusNone},
	{"list-limit-zero", "A ListOptions.Limit of 0 means no cap: List returns every pet selected.", testListLimitZero},
	{"list-combined", "Status, After and Limit apply together: List returns the first Limit pets with ID greater than After that have the status.", testListCombined},
	{"list-empty", "An empty result is an empty or nil slice and no error.", testListEmpty},

	// Contexts.
	{"add-canceled", "When ctx is done, Add returns an error wrapping ctx.Err().", withDoneContext(context.Canceled, "Add")},
	{"get-canceled", "When ctx is done, Get returns an error wrapping ctx.Err().", withDoneContext(context.Canceled, "Get")},
	{"list-canceled", "When ctx is done, List returns an error wrapping ctx.Err().", withDoneContext(context.Canceled, "List")},
	{"deadline-exceeded", "When ctx's deadline has passed, every method returns an error wrapping context.DeadlineExceeded.", withDoneContext(context.DeadlineExceeded, "Add", "Get", "List")},

	// IDs over time and pagination.
	{"ids-grow", "Once Get or List has returned a pet, no pet with a smaller ID appears later.", testIDsGrow},
	{"paginate", "Paging through List, with After set to the last ID of the previous page, visits every pet exactly once.", testPaginate},
	{"paginate-while-adding", "Paging through List visits every pet exactly once also when pets are added between pages.", testPaginateWhileAdding},

	// Concurrency.
	{"ids-unique-concurrent", "IDs are positive and unique also when 64 goroutines call Add at once, and every pet added is stored.", testIDsUniqueConcurrent},
	{"idempotent-concurrent", "Adds at once with one idempotency key and principal store one pet; each returns it or an error wrapping ErrIdempotencyKeyInUse.", testIdempotentConcurrent},
	{"paginate-concurrent-adds", "IDs grow in the order in which pets become visible, so paging visits every pet exactly once while other goroutines add pets.", testPaginateConcurrentAdds},
	{"concurrent-use", "A Store is safe for concurrent use by multiple goroutines: Add, Get and List may run at once (run under -race to catch a missing lock).", testConcurrentUse},

	// Optional interfaces, checked only for a store that has them.
	{"notify-adds", "An AddNotifier's Add wakes the callers of NotifyAdds before it returns.", testNotifyAdds},
}

func testNotifyAdds(st *storeT) {
	n, ok := st.s.(petstore.AddNotifier)
	if !ok {
		return
	}
	var woken atomic.Int64
	n.NotifyAdds(st.Context(), func() { woken.Add(1) })
	for i := range 3 {
		before := woken.Load()
		st.addN(1)
		if woken.Load() == before {
			st.Errorf("Add %d of 3 returned before it woke the caller of NotifyAdds", i+1)
		}
	}
}

func testAddInvalid(st *storeT) {
	invalid := map[string]petstore.NewPet{
		"blank name":        {Name: " ", CategoryID: 1},
		"name not UTF-8":    {Name: "a\xff", CategoryID: 1},
		"control character": {Name: "a\x00b", CategoryID: 1},
		"long name":         {Name: strings.Repeat("a", petstore.MaxNameLength+1), CategoryID: 1},
		"category zero":     {Name: "a", CategoryID: 0},
		"category negative": {Name: "a", CategoryID: -1},
		"unknown status":    {Name: "a", CategoryID: 1, Status: "lost"},
	}
	for _, why := range slices.Sorted(maps.Keys(invalid)) {
		if _, _, err := st.s.Add(st.Context(), invalid[why], petstore.AddOptions{}); !errors.Is(err, petstore.ErrInvalidPet) {
			st.Errorf("Add of a pet with a %s returned error %v, not one wrapping ErrInvalidPet", why, err)
		}
	}
	added := st.add(petstore.NewPet{Name: "valid", CategoryID: 1})
	diff(st, "List after the invalid Adds and one valid one", added, st.list(petstore.ListOptions{}))
}

func testIDsPositive(st *storeT) {
	notPositive := slices.DeleteFunc(st.addN(20), func(p petstore.Pet) bool { return p.ID > 0 })
	diff(st, "pets that Add returned with an ID that is not positive", []petstore.Pet{}, notPositive)
}

func testIDsUnique(st *storeT) {
	added := st.addN(100)
	diff(st, "IDs that Add returned more than once, with their counts", map[int64]int{}, duplicates(added))
	diff(st, "IDs that List returns more than once, with their counts", map[int64]int{}, duplicates(st.list(petstore.ListOptions{})))
}

func testIDsUniqueConcurrent(st *storeT) {
	const n = 64
	var added concurrentAdds
	atOnce(n, func(i int) {
		p := petstore.NewPet{Name: fmt.Sprintf("concurrent %d", i), CategoryID: int64(i + 1), Status: statuses[i%len(statuses)]}
		added.add(st, fmt.Sprintf("goroutine %d", i), p)
	})
	if st.Failed() {
		return
	}
	notPositive := slices.DeleteFunc(slices.Clone(added.pets), func(p petstore.Pet) bool { return p.ID > 0 })
	diff(st, "pets that concurrent Adds returned with an ID that is not positive", []petstore.Pet{}, notPositive)
	diff(st, "IDs that concurrent Adds returned more than once, with their counts", map[int64]int{}, duplicates(added.pets))
	diff(st, "List after the concurrent Adds", byID(added.pets), st.list(petstore.ListOptions{}))
}

// concurrentAdds collects the pets that Adds from several goroutines return.
type concurrentAdds struct {
	mu   sync.Mutex
	pets []petstore.Pet
}

// add adds p from the goroutine who and keeps the pet that Add returns; it
// reports a failure of Add and tells whether Add succeeded.
func (a *concurrentAdds) add(st *storeT, who string, p petstore.NewPet) (petstore.Pet, bool) {
	got, _, err := st.s.Add(st.Context(), p, petstore.AddOptions{})
	if err != nil {
		st.Errorf("Add(%+v) from %s: %v", p, who, err)
		return got, false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.pets = append(a.pets, got)
	return got, true
}

func testIDsGrow(st *storeT) {
	pets := newPets(4)
	a := st.add(pets[0])[0]
	if _, err := st.s.Get(st.Context(), a.ID); err != nil {
		st.Fatalf("Get(%d) of a pet just added: %v", a.ID, err)
	}
	b := st.add(pets[1])[0]
	if b.ID <= a.ID {
		st.Errorf("Get returned the pet with ID %d, then Add returned ID %d, which is not greater", a.ID, b.ID)
	}
	listed := st.list(petstore.ListOptions{})
	c := st.add(pets[2])[0]
	for _, p := range listed {
		if c.ID <= p.ID {
			st.Errorf("List returned the pet with ID %d, then Add returned ID %d, which is not greater", p.ID, c.ID)
		}
	}
	diff(st, "List after the Adds", []petstore.Pet{a, b, c}, st.list(petstore.ListOptions{}))
}

func testRoundTrip(st *storeT) {
	added := st.add(samplePets()...)
	for i, p := range samplePets() {
		diff(st, fmt.Sprintf("Add of sample pet %d (name %.20q) returned", i, p.Name), p, added[i].NewPet)
	}
	st.diffGets("after Add returned it", added)
	// List under a filter returns the same values too; list-status,
	// which relies on this clause, checks that.
	diff(st, "List after Add returned the pets", byID(added), st.list(petstore.ListOptions{}))
}

func testNoAlias(st *storeT) {
	want := byID(st.add(samplePets()...))

	all := st.list(petstore.ListOptions{})
	for i := range all {
		all[i] = petstore.Pet{ID: -1, NewPet: petstore.NewPet{Name: "changed by the caller", CategoryID: 7, Status: petstore.StatusSold}}
	}
	// Append to a page: a store that returned a slice of its own array
	// would find the appended pet in it.
	page := st.list(petstore.ListOptions{Limit: 2})
	page = append(page, petstore.Pet{ID: -2, NewPet: petstore.NewPet{Name: "appended by the caller", CategoryID: 9}})
	page[0].Name = "changed by the caller"
	if p, err := st.s.Get(st.Context(), want[0].ID); err == nil {
		p.Name = "changed by the caller"
	}

	diff(st, "List after the caller changed pets that List and Get returned", want, st.list(petstore.ListOptions{}))
	st.diffGets("after the caller changed pets that List and Get returned", want)
}

func testGetUnknown(st *storeT) {
	got, want := map[int64]string{}, map[int64]string{}
	probe := func(id int64) {
		p, err := st.s.Get(st.Context(), id)
		want[id], got[id] = wantWrapping(petstore.ErrNotFound, p, err)
	}
	probe(1) // the store is empty
	maxID := slices.Max(ids(st.addN(5)))
	for _, id := range []int64{0, -1, -maxID, math.MinInt64, math.MaxInt64} {
		probe(id)
	}
	if maxID < math.MaxInt64 {
		probe(maxID + 1)
	}
	diff(st, "Get of IDs that no pet has", want, got)
}

// wantWrapping describes the outcome that a call with a done context must
// have, and what it had instead.
func wantWrapping(target error, v any, err error) (want, got string) {
	want = fmt.Sprintf("an error wrapping %v", target)
	if errors.Is(err, target) {
		return want, want
	}
	return want, outcome(v, err)
}

// withDoneContext returns the test that calls each of methods, on a store
// that holds pets, with a context canceled or, for DeadlineExceeded, past
// its deadline, and wants each to return an error wrapping target.
func withDoneContext(target error, methods ...string) func(*storeT) {
	return func(st *storeT) {
		id := st.addN(3)[0].ID
		ctx, cancel := context.WithCancel(st.Context())
		cancel()
		if target == context.DeadlineExceeded {
			ctx, cancel = context.WithDeadline(st.Context(), time.Unix(0, 0))
			defer cancel()
		}
		calls := map[string]func() (any, error){
			"Add": func() (any, error) {
				p, _, err := st.s.Add(ctx, petstore.NewPet{Name: "done", CategoryID: 1, Status: petstore.StatusAvailable}, petstore.AddOptions{})
				return p, err
			},
			"Get":  func() (any, error) { return st.s.Get(ctx, id) },
			"List": func() (any, error) { return st.s.List(ctx, petstore.ListOptions{}) },
		}
		want, got := map[string]string{}, map[string]string{}
		for _, m := range methods {
			v, err := calls[m]()
			want[m], got[m] = wantWrapping(target, v, err)
		}
		diff(st, fmt.Sprintf("calls with a done context (%v) on a store that holds pets, Get of pet %d", target, id), want, got)
	}
}

func testConcurrentUse(st *storeT) {
	const workers, rounds = 8, 16
	added := concurrentAdds{pets: st.addN(8)}
	atOnce(workers, func(w int) {
		for i := range rounds {
			p := petstore.NewPet{Name: fmt.Sprintf("worker %d pet %d", w, i), CategoryID: int64(i + 1), Status: statuses[(w+i)%len(statuses)]}
			got, ok := added.add(st, fmt.Sprintf("worker %d", w), p)
			if !ok {
				return
			}
			back, err := st.s.Get(st.Context(), got.ID)
			diff(st, fmt.Sprintf("Get(%d) from worker %d of the pet that Add returned", got.ID, w), outcome(got, nil), outcome(back, err))
			opts := petstore.ListOptions{Status: statuses[i%len(statuses)], After: got.ID / 2, Limit: 1 + i%4}
			page, err := st.s.List(st.Context(), opts)
			if err != nil {
				st.Errorf("List(%+v) from worker %d: %v", opts, w, err)
				continue
			}
			if !mayReturn(opts, page) {
				st.Errorf("List(%+v) from worker %d returned %+v: not ascending by ID, more than Limit, or pets it does not select",
					opts, w, page)
			}
		}
	})
	diff(st, "List after concurrent Adds, Gets and Lists", byID(added.pets), st.list(petstore.ListOptions{}))
}

// addKeyed calls Add with an idempotency key under principal. It stops the
// subtest, with one clear line, when the store says it does not support
// idempotency keys.
func (st *storeT) addKeyed(principal, key string, p petstore.NewPet) (petstore.Pet, bool, error) {
	ctx := petstore.WithPrincipal(st.Context(), principal)
	pet, replayed, err := st.s.Add(ctx, p, petstore.AddOptions{IdempotencyKey: key})
	if errors.Is(err, errors.ErrUnsupported) {
		st.Fatalf("the store does not support idempotency keys (Add returned %v); the Store contract requires them", err)
	}
	return pet, replayed, err
}

// firstKeyed is addKeyed with a key not used before: it stops the subtest
// unless Add returns a new pet.
func (st *storeT) firstKeyed(principal, key string, p petstore.NewPet) petstore.Pet {
	pet, replayed, err := st.addKeyed(principal, key, p)
	if err != nil || replayed {
		st.Fatalf("the first Add by %s with key %q = %s, replayed %v; want a new pet", principal, key, outcome(pet, err), replayed)
	}
	return pet
}

// addResult is what Add returns but for its error, for outcome.
type addResult struct {
	Pet      petstore.Pet
	Replayed bool
}

// wantReplay checks that a keyed Add by principal of p replays first.
func (st *storeT) wantReplay(when, principal, key string, p petstore.NewPet, first petstore.Pet) {
	pet, replayed, err := st.addKeyed(principal, key, p)
	diff(st, fmt.Sprintf("Add by %s with key %q and the pet that it first stored, %s", principal, key, when),
		outcome(addResult{first, true}, nil), outcome(addResult{pet, replayed}, err))
}

// wantReused checks that a keyed Add by principal of p, another pet than the
// key first stored, fails with an error wrapping ErrIdempotencyKeyReused.
func (st *storeT) wantReused(when, principal, key string, p petstore.NewPet) {
	if pet, replayed, err := st.addKeyed(principal, key, p); !errors.Is(err, petstore.ErrIdempotencyKeyReused) {
		st.Errorf("Add by %s with key %q of %+v, another pet than it first stored, %s = %s; want an error wrapping ErrIdempotencyKeyReused",
			principal, key, p, when, outcome(addResult{pet, replayed}, err))
	}
}

func testIdempotentReplay(st *storeT) {
	p := petstore.NewPet{Name: "Rex", CategoryID: 3, Status: petstore.StatusAvailable}
	first := st.firstKeyed("alice", "key-1", p)
	st.wantReplay("sent again", "alice", "key-1", p, first)
	diff(st, "List after two Adds with one key", []petstore.Pet{first}, st.list(petstore.ListOptions{}))

	// An invalid pet with a key stores nothing and does not use the key up.
	if _, _, err := st.addKeyed("alice", "key-2", petstore.NewPet{Name: "", CategoryID: 1}); !errors.Is(err, petstore.ErrInvalidPet) {
		st.Errorf("Add of an invalid pet with a key: %v, want an error wrapping ErrInvalidPet", err)
	}
	second, replayed, err := st.addKeyed("alice", "key-2", p)
	if err != nil || replayed {
		st.Errorf("Add with a key whose only earlier use was an invalid pet = replayed %v, %v; want a new pet", replayed, err)
	}
	diff(st, "List after a valid Add with a key first sent with an invalid pet", []petstore.Pet{first, second}, st.list(petstore.ListOptions{}))
}

func testIdempotentReuse(st *storeT) {
	p := petstore.NewPet{Name: "Rex", CategoryID: 3}
	first := st.firstKeyed("alice", "key-1", p)
	for _, other := range []petstore.NewPet{{Name: "Tom", CategoryID: 3}, {Name: "Rex", CategoryID: 4}, {Name: "Rex", CategoryID: 3, Status: petstore.StatusSold}} {
		st.wantReused(fmt.Sprintf("(it first stored %+v)", p), "alice", "key-1", other)
	}
	diff(st, "List after reusing a key for other pets", []petstore.Pet{first}, st.list(petstore.ListOptions{}))
}

func testIdempotentScope(st *storeT) {
	p := petstore.NewPet{Name: "Rex", CategoryID: 3}
	alice := st.firstKeyed("alice", "shared-key", p)
	bob, replayed, err := st.addKeyed("bob", "shared-key", p)
	switch {
	case err != nil:
		st.Errorf("Add with alice's key for bob: %v; want a new pet", err)
	case replayed || bob.ID == alice.ID:
		st.Errorf("Add with alice's key for bob replayed alice's pet %d: keys are not scoped by principal", alice.ID)
	}
	if _, _, err := st.addKeyed("carol", "shared-key", petstore.NewPet{Name: "Other", CategoryID: 1}); err != nil {
		st.Errorf("Add of another pet with alice's key for carol: %v; want a new pet", err)
	}
	if n := len(st.list(petstore.ListOptions{})); n != 3 {
		st.Errorf("List after one key under three principals holds %d pets, want 3", n)
	}
}

func testIdempotentConcurrent(st *storeT) {
	const n = 16
	p := petstore.NewPet{Name: "Rex", CategoryID: 3}
	ctx := petstore.WithPrincipal(st.Context(), "alice")
	pets, errs := make([]petstore.Pet, n), make([]error, n)
	atOnce(n, func(i int) { pets[i], _, errs[i] = st.s.Add(ctx, p, petstore.AddOptions{IdempotencyKey: "once"}) })
	ids := map[int64]int{}
	for i, err := range errs {
		switch {
		case err == nil:
			ids[pets[i].ID]++
		case !errors.Is(err, petstore.ErrIdempotencyKeyInUse):
			st.Errorf("Add from goroutine %d: %v; want the pet, or an error wrapping ErrIdempotencyKeyInUse", i, err)
		}
	}
	if len(ids) > 1 {
		st.Errorf("%d Adds at once with one key returned %d different pets (IDs and counts %v); want one", n, len(ids), ids)
	}
	if got := len(st.list(petstore.ListOptions{})); got != 1 {
		st.Errorf("List after %d Adds at once with one key holds %d pets, want 1", n, got)
	}
}

func testListAscending(st *storeT) {
	want := byID(st.addN(20))
	got := st.list(petstore.ListOptions{})
	if !ascending(got) {
		st.Errorf("List(ListOptions{}) returned the IDs %v, which do not ascend", ids(got))
		return
	}
	diff(st, "IDs of List(ListOptions{})", ids(want), ids(got))
}

// diffLists lists the store with each of opts and compares every list with
// the pets of want, sorted by ID, that it selects.
func (st *storeT) diffLists(what string, want []petstore.Pet, opts ...petstore.ListOptions) {
	gotPages, wantPages := map[string][]petstore.Pet{}, map[string][]petstore.Pet{}
	for _, o := range opts {
		key := fmt.Sprintf("%+v", o)
		wantPages[key], gotPages[key] = selectPets(want, o), st.list(o)
	}
	diff(st, what, wantPages, gotPages)
}

func testListLimit(st *storeT) {
	var opts []petstore.ListOptions
	for limit := 1; limit <= 12; limit++ {
		opts = append(opts, petstore.ListOptions{Limit: limit})
	}
	st.diffLists("List(key) of 10 pets", byID(st.addN(10)), opts...)
}

func testListLimitZero(st *storeT) {
	// More pets than any page size a store might fall back to by mistake.
	st.diffLists("List(key) of 150 pets", byID(st.addN(150)), petstore.ListOptions{}, petstore.ListOptions{Status: petstore.StatusPending})
}

func testListAfter(st *storeT) {
	want := byID(st.addN(10))
	opts := []petstore.ListOptions{{After: 0}, {After: -1}, {After: math.MinInt64}, {After: math.MaxInt64}}
	for _, p := range want {
		opts = append(opts, petstore.ListOptions{After: p.ID}, petstore.ListOptions{After: p.ID - 1})
	}
	st.diffLists("List(key)", want, opts...)
}

func byStatus() []petstore.ListOptions {
	var opts []petstore.ListOptions
	for _, s := range statuses[1:] {
		opts = append(opts, petstore.ListOptions{Status: s})
	}
	return opts
}

func testListStatus(st *storeT) {
	st.diffLists("List(key)", byID(st.addN(12)), byStatus()...)
}

func testListStatusNone(st *storeT) {
	pets := newPets(12)
	for i := range pets {
		if i%4 != 0 {
			pets[i].Status = "" // mostly pets without a status
		}
	}
	st.diffLists("List(key) of a store holding mostly pets without a status", byID(st.add(pets...)), byStatus()...)
}

func testListCombined(st *storeT) {
	want := byID(st.addN(13))
	var opts []petstore.ListOptions
	for _, s := range statuses {
		for _, after := range []int64{0, want[3].ID, want[8].ID} {
			for _, limit := range []int{0, 1, 2, 5} {
				opts = append(opts, petstore.ListOptions{Status: s, After: after, Limit: limit})
			}
		}
	}
	st.diffLists("List(key)", want, opts...)
}

func testListEmpty(st *storeT) {
	st.diffLists("List(key) of an empty store", nil, petstore.ListOptions{}, petstore.ListOptions{Status: petstore.StatusAvailable, Limit: 1})
	added := byID(st.add(petstore.NewPet{Name: "no status", CategoryID: 1}, petstore.NewPet{Name: "available", CategoryID: 1, Status: petstore.StatusAvailable}))
	last := added[len(added)-1].ID
	st.diffLists("List(key) that selects no pet", added, []petstore.ListOptions{{After: last}, {After: math.MaxInt64}, {Status: petstore.StatusPending},
		{Status: petstore.StatusSold, Limit: 5}, {Status: petstore.StatusAvailable, After: last}}...)
}

// paginate pages through List from opts.After with opts.Limit pets a page,
// calling between, when it is not nil, after each full page. It returns the
// pets visited in order. It stops at a page that is not full unless more,
// when it is not nil, returns true then, and at a page that List may not
// return (see mayReturn), such as one that does not advance past After. It
// may run on any goroutine.
func (st *storeT) paginate(opts petstore.ListOptions, between func(page int), more func() bool) []petstore.Pet {
	var visited []petstore.Pet
	for page := 0; page < 100_000; {
		got, err := st.s.List(st.Context(), opts)
		if err != nil {
			st.Errorf("paging: List(%+v): %v", opts, err)
			return visited
		}
		if !mayReturn(opts, got) {
			st.Errorf("paging: List(%+v) returned the IDs %v: not ascending past After, or more than Limit", opts, ids(got))
			return visited
		}
		visited = append(visited, got...)
		if len(got) > 0 {
			opts.After = got[len(got)-1].ID
		}
		if len(got) < opts.Limit {
			if more == nil || !more() {
				return visited
			}
			continue
		}
		if between != nil {
			between(page)
		}
		page++
	}
	st.Errorf("paging: List(%+v) still returns full pages after 100000 pages", opts)
	return visited
}

func testPaginate(st *storeT) {
	want := byID(st.addN(20))
	for _, limit := range []int{1, 2, 3, 7, 20, 25} {
		diff(st, fmt.Sprintf("IDs visited paging with Limit %d", limit), ids(want), ids(st.paginate(petstore.ListOptions{Limit: limit}, nil, nil)))
	}
	for _, s := range statuses[1:] {
		diff(st, fmt.Sprintf("IDs visited paging with Status %q and Limit 2", s),
			ids(selectPets(want, petstore.ListOptions{Status: s})), ids(st.paginate(petstore.ListOptions{Status: s, Limit: 2}, nil, nil)))
	}
}

func testPaginateWhileAdding(st *storeT) {
	added := st.addN(10)
	extra := newPets(20)[10:]
	visited := st.paginate(petstore.ListOptions{Limit: 3}, func(page int) {
		if page < len(extra) {
			added = append(added, st.add(extra[page])...)
		}
	}, nil)
	diff(st, "IDs visited paging with Limit 3 while a pet is added after each page", ids(byID(added)), ids(visited))
}

// testPaginateConcurrentAdds checks that pagers, each from the start,
// visit every pet while writers add pets. A pager misses a pet when the
// store drew its ID before making it visible (as a database store that
// takes a sequence value and inserts later does) and another Add overtook
// it in the gap. The gap is short, so enough writers run to overtake each
// other in it and enough pagers that one lists in most such gaps, with
// pages long enough to keep up with the newest pets, yielding between
// calls, for a number of Adds rather than for a time.
func testPaginateConcurrentAdds(st *storeT) {
	procs := runtime.GOMAXPROCS(0)
	writers := max(8, 4*procs)
	pagers := 2 * procs
	perWriter := max(4, 1024/writers) // about 1,000 pets in all
	const limit = 16
	added := concurrentAdds{pets: st.addN(10)}
	visited := make([][]petstore.Pet, pagers)
	var writing atomic.Int64 // the writers still adding
	writing.Store(int64(writers))
	atOnce(writers+pagers, func(w int) {
		if w < writers {
			defer writing.Add(-1)
			for i := range perWriter {
				p := petstore.NewPet{Name: fmt.Sprintf("writer %d pet %d", w, i), CategoryID: int64(w + 1), Status: statuses[i%len(statuses)]}
				if _, ok := added.add(st, fmt.Sprintf("writer %d", w), p); !ok {
					return
				}
				runtime.Gosched()
			}
			return
		}
		// Once every Add has returned, one more List that is not full ends
		// the walk.
		done := false
		visited[w-writers] = st.paginate(petstore.ListOptions{Limit: limit}, nil, func() bool {
			if done {
				return false
			}
			done = writing.Load() == 0
			runtime.Gosched() // let the writers add more
			return true
		})
	})
	if st.Failed() {
		return
	}
	want := ids(byID(added.pets))
	for r, v := range visited {
		got := ids(v)
		missed := slices.DeleteFunc(slices.Clone(want), func(id int64) bool { return slices.Contains(got, id) })
		if len(missed) > 0 {
			st.Errorf("pager %d, paging with Limit %d while %d goroutines added pets, missed %d of %d pets, such as the IDs %v: each became visible after List had returned a greater ID",
				r, limit, writers, len(missed), len(want), missed[:min(len(missed), 10)])
		} else {
			diff(st, fmt.Sprintf("IDs visited by pager %d, paging with Limit %d while %d goroutines added pets", r, limit, writers), want, got)
		}
	}
}
