package petstoretest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/petstore-go/petstore"
)

// TestStore tests a petstore.Store implementation against the contract in
// the doc comment of petstore.Store. It runs each clause of the contract as
// a subtest, named after the clause, on a store that it gets from newStore;
// a failure names the clause and the sentence of the contract that the
// store broke.
//
// newStore must return a new, empty store each time it is called. It may use
// t to register cleanup. The subtests run one after another, never in
// parallel, so a newStore that empties one shared database before returning
// it is fine. The IDs of a new store need not start at 1. The simplest
// clauses run first, so the first failure shown is the one to fix first.
//
// Run TestStore with the race detector on: the clauses about concurrent use
// can only show a missing lock when it is. Those clauses add about 1,000
// pets from several goroutines at once, as many as GOMAXPROCS allows to run
// in parallel; with GOMAXPROCS 1 they cannot make Adds overtake each other,
// and miss a store that makes pets visible in another order than their IDs.
func TestStore(t *testing.T, newStore func(t *testing.T) petstore.Store) {
	t.Helper()
	for _, c := range storeCases {
		runClause(t, c.name, c.clause, func(r reporter) { c.run(r, newStore(r.(*testing.T))) })
	}
}

// CheckStore is the core of TestStore: it checks the stores that newStore
// returns, one new, empty store for each clause, and returns an error for
// each clause that failed, joined, or nil. Each error names its clause, as
// in petstoretest: clause "ids-unique" failed: ...
func CheckStore(newStore func() (petstore.Store, error)) error {
	var errs []error
	for _, c := range storeCases {
		errs = append(errs, checkClause(c.name, c.clause, func(r reporter) {
			s, err := newStore()
			if err != nil {
				r.Fatalf("newStore: %v", err)
			}
			c.run(r, s)
		}))
	}
	return errors.Join(errs...)
}

// A storeCase is one clause of the Store contract and the test that
// enforces it.
type storeCase struct {
	name   string // the subtest's name
	clause string // the sentence of the contract that test enforces
	test   func(st *storeT)
}

// run runs the clause on s, which must be new and empty.
func (c storeCase) run(r reporter, s petstore.Store) {
	if s == nil {
		r.Fatalf("newStore returned a nil Store")
	}
	st := &storeT{t: r, s: s, ctx: r.Context()}
	st.requireEmpty()
	c.test(st)
}

// storeT is the state of one clause of TestStore.
type storeT struct {
	t   reporter
	s   petstore.Store
	ctx context.Context
}

// errorf reports a violation of the clause and goes on. It may be called
// from any goroutine.
func (st *storeT) errorf(format string, args ...any) { st.t.Errorf(format, args...) }

// fatalf reports a violation of the clause and stops it. It must be called
// from the clause's goroutine.
func (st *storeT) fatalf(format string, args ...any) { st.t.Fatalf(format, args...) }

// diff reports a violation of the clause when got differs from want, showing
// the difference, and tells whether they were equal. A nil slice equals an
// empty one.
func (st *storeT) diff(what string, want, got any) bool {
	if d := gocmp.Diff(want, got, diffOptions...); d != "" {
		st.errorf("%s (-want +got):\n%s", what, d)
		return false
	}
	return true
}

// diffOptions make diffs readable: nil and empty slices and maps are
// equal, and strings are compared whole, so that a diff shows both values
// instead of the characters that differ.
var diffOptions = []gocmp.Option{
	cmpopts.EquateEmpty(),
	gocmp.Comparer(func(a, b string) bool { return a == b }),
}

// requireEmpty stops the subtest when newStore did not return an empty
// store: every clause is checked against pets that the subtest added.
func (st *storeT) requireEmpty() {
	pets, err := st.s.List(st.ctx, petstore.ListOptions{})
	if err != nil {
		st.t.Fatalf("List on the store that newStore returned: %v", err)
	}
	if len(pets) > 0 {
		st.t.Fatalf("newStore returned a store that holds %d pets; it must return an empty one", len(pets))
	}
}

// add adds each pet and returns them as Add returned them. It stops the
// subtest when Add fails.
func (st *storeT) add(pets ...petstore.NewPet) []petstore.Pet {
	added := make([]petstore.Pet, 0, len(pets))
	for _, p := range pets {
		got, _, err := st.s.Add(st.ctx, p, petstore.AddOptions{})
		if err != nil {
			st.fatalf("Add(%+v): %v", p, err)
		}
		added = append(added, got)
	}
	return added
}

// addN adds n pets made by newPets.
func (st *storeT) addN(n int) []petstore.Pet {
	return st.add(newPets(n)...)
}

// list calls List and stops the subtest when it fails.
func (st *storeT) list(opts petstore.ListOptions) []petstore.Pet {
	pets, err := st.s.List(st.ctx, opts)
	if err != nil {
		st.fatalf("List(%+v): %v", opts, err)
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
		pets[i] = petstore.NewPet{
			Name:       fmt.Sprintf("pet %d", i+1),
			CategoryID: int64(i%3 + 1),
			Status:     statuses[(i+1)%len(statuses)],
		}
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
	var sel []petstore.Pet
	for _, p := range want {
		if p.ID <= opts.After || opts.Status != "" && p.Status != opts.Status {
			continue
		}
		if opts.Limit > 0 && len(sel) == opts.Limit {
			break
		}
		sel = append(sel, p)
	}
	return sel
}

// ids returns the IDs of pets, in order.
func ids(pets []petstore.Pet) []int64 {
	out := make([]int64, len(pets))
	for i, p := range pets {
		out[i] = p.ID
	}
	return out
}

// ascending reports whether the IDs of pets strictly ascend.
func ascending(pets []petstore.Pet) bool {
	for i := 1; i < len(pets); i++ {
		if pets[i].ID <= pets[i-1].ID {
			return false
		}
	}
	return true
}

// duplicates returns the IDs that occur more than once in pets, with their
// counts.
func duplicates(pets []petstore.Pet) map[int64]int {
	n := make(map[int64]int, len(pets))
	for _, p := range pets {
		n[p.ID]++
	}
	for id, c := range n {
		if c == 1 {
			delete(n, id)
		}
	}
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
