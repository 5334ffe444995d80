package petstoretest

import (
	"cmp"
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/petstore-go/petstore"
)

// TestStore tests a petstore.Store implementation against the contract in
// the doc comment of petstore.Store. It runs each clause of the contract as
// a subtest, named after the clause, on a store that it gets from newStore;
// a failure names the sentence of the contract that the store broke.
//
// newStore must return a new, empty store each time it is called. It may use
// t to register cleanup. The subtests run one after another, never in
// parallel, so a newStore that empties one shared database before returning
// it is fine. The IDs of a new store need not start at 1.
//
// The simplest clauses run first, so the first failure shown is the one to
// fix first. A subtest shows its first few failures (maxShown) and counts
// the rest. A clause whose test relies on simpler clauses (list-limit relies
// on list-ascending, for one) still runs when one of those failed, but when
// it fails too it fails with one line that names the simpler clause
// instead of its own failures, which are most likely the same bug seen
// again: fix the simpler clause and run TestStore again. Run one subtest
// alone (go test -run 'TestX/list-limit') to see all its failures.
//
// Run TestStore with the race detector on: the clauses about concurrent use
// can only show a missing lock when it is. Those clauses add about 1,000
// pets from several goroutines at once, as many as GOMAXPROCS allows to run
// in parallel; with GOMAXPROCS 1 they cannot make Adds overtake each other,
// and miss a store that makes pets visible in another order than their IDs.
func TestStore(t *testing.T, newStore func(t *testing.T) petstore.Store) {
	t.Helper()
	runClauses(t, storeCases, storeCase.info, func(t *testing.T, c storeCase, failedNeed clauseInfo) {
		s := newStore(t)
		if s == nil {
			t.Fatal("petstoretest: newStore returned a nil Store")
		}
		st := &storeT{t: t, clause: c.clause, s: s, ctx: t.Context(), failedNeed: failedNeed.name, failedNeedClause: failedNeed.clause}
		defer st.summarize()
		st.requireEmpty()
		c.test(st)
	})
}

// A storeCase is one clause of the Store contract and the test that
// enforces it.
type storeCase struct {
	name   string // the subtest's name
	clause string // the sentence of the contract that test enforces
	// needs names the earlier cases whose clauses the test relies on: when
	// one of them fails, this test is likely to fail for the same reason.
	needs []string
	test  func(st *storeT)
}

func (c storeCase) info() clauseInfo { return clauseInfo{c.name, c.clause, c.needs} }

// clauseInfo names a clause of a contract: the subtest's name, the sentence
// it enforces and the earlier clauses its test relies on.
type clauseInfo struct {
	name, clause string
	needs        []string
}

// runClauses runs each of cases as a subtest, in order, with run. A case
// whose test relies, directly or through others, on a clause that failed
// before it is given the simplest such failed clause, so that its own
// failure can name that clause instead of repeating the same bug.
func runClauses[C any](t *testing.T, cases []C, info func(C) clauseInfo, run func(t *testing.T, c C, failedNeed clauseInfo)) {
	t.Helper()
	infos := make([]clauseInfo, len(cases))
	byName := map[string]clauseInfo{}
	needs := map[string]map[string]bool{} // each case's needs, direct or not
	for i, c := range cases {             // a case needs only earlier ones
		infos[i] = info(c)
		byName[infos[i].name] = infos[i]
		all := map[string]bool{}
		for _, need := range infos[i].needs {
			all[need] = true
			for n := range needs[need] {
				all[n] = true
			}
		}
		needs[infos[i].name] = all
	}
	// failedRoot maps each failed subtest to the simplest failed subtest
	// that it relies on, itself when there is none.
	failedRoot := map[string]string{}
	for i, c := range cases {
		var relied string
		for _, earlier := range infos[:i] { // the simplest first
			if root, ok := failedRoot[earlier.name]; ok && needs[infos[i].name][earlier.name] {
				relied = root
				break
			}
		}
		passed := t.Run(infos[i].name, func(t *testing.T) { run(t, c, byName[relied]) })
		if !passed {
			failedRoot[infos[i].name] = cmp.Or(relied, infos[i].name)
		}
	}
}

// maxShown is how many failures a subtest of TestStore shows; it counts the
// rest. maxLines is how many lines of one failure it shows.
const (
	maxShown = 3
	maxLines = 25
)

// storeT is the state of one subtest of TestStore. Its failure methods
// append the clause under test to the first message they show, show at
// most maxShown failures, and show none when a clause that the test relies
// on failed.
type storeT struct {
	t      *testing.T
	clause string
	s      petstore.Store
	ctx    context.Context

	// failedNeed is the name of the failed subtest that this one relies on,
	// "" when there is none; failedNeedClause is its clause.
	failedNeed, failedNeedClause string

	mu       sync.Mutex
	failures int // the number of failures reported so far
}

// errorf reports a violation of the clause and goes on. It may be called
// from any goroutine.
func (st *storeT) errorf(format string, args ...any) {
	st.t.Helper()
	st.mu.Lock()
	st.failures++
	n := st.failures
	st.mu.Unlock()
	switch {
	case st.failedNeed != "" || n > maxShown:
		st.t.Fail() // summarize counts it
	case n == 1:
		st.t.Errorf("%s\ncontract: %s", clip(fmt.Sprintf(format, args...)), st.clause)
	default:
		st.t.Errorf("%s", clip(fmt.Sprintf(format, args...)))
	}
}

// fatalf reports a violation of the clause and stops the subtest. It must be
// called from the subtest's goroutine.
func (st *storeT) fatalf(format string, args ...any) {
	st.t.Helper()
	st.errorf(format, args...)
	st.t.FailNow()
}

// summarize reports, at the end of a subtest, the failures that errorf did
// not show.
func (st *storeT) summarize() {
	st.mu.Lock()
	n := st.failures
	st.mu.Unlock()
	switch {
	case n == 0:
	case st.failedNeed != "":
		st.t.Errorf("fails too (%s not shown), likely because %s failed, which this clause relies on: fix that and run again (%s: %s); "+
			"to see this clause's own failures, run it alone: %s",
			failures(n), st.failedNeed, st.failedNeed, st.failedNeedClause, runAlone(st.t.Name()))
	case n > maxShown:
		st.t.Errorf("and %s more of this clause, not shown", failures(n-maxShown))
	}
}

// runAlone returns the go test command that runs the subtest named name (as
// testing.T.Name gives it) and nothing else.
func runAlone(name string) string {
	parts := strings.Split(name, "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	return "go test -run '" + strings.Join(parts, "/") + "'"
}

// failures returns "1 failure" or "n failures".
func failures(n int) string {
	if n == 1 {
		return "1 failure"
	}
	return fmt.Sprintf("%d failures", n)
}

// clip returns msg cut to maxLines lines.
func clip(msg string) string {
	lines := strings.Split(msg, "\n")
	if len(lines) <= maxLines {
		return msg
	}
	return strings.Join(lines[:maxLines-1], "\n") + fmt.Sprintf("\n… %d more lines", len(lines)-maxLines+1)
}

// diff reports a violation of the clause when got differs from want, showing
// the difference, and tells whether they were equal. A nil slice equals an
// empty one.
func (st *storeT) diff(what string, want, got any) bool {
	st.t.Helper()
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
	st.t.Helper()
	pets, err := st.s.List(st.ctx, petstore.ListOptions{})
	if err != nil {
		st.t.Fatalf("petstoretest: List on the store that newStore returned: %v", err)
	}
	if len(pets) > 0 {
		st.t.Fatalf("petstoretest: newStore returned a store that holds %d pets; it must return an empty one", len(pets))
	}
}

// add adds each pet and returns them as Add returned them. It stops the
// subtest when Add fails.
func (st *storeT) add(pets ...petstore.NewPet) []petstore.Pet {
	st.t.Helper()
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
	st.t.Helper()
	return st.add(newPets(n)...)
}

// list calls List and stops the subtest when it fails.
func (st *storeT) list(opts petstore.ListOptions) []petstore.Pet {
	st.t.Helper()
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
