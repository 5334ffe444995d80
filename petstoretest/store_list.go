package petstoretest

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/petstore-go/petstore"
)

func testListAscending(st *storeT) {
	want := byID(st.addN(20))
	got := st.list(petstore.ListOptions{})
	if !ascending(got) {
		st.errorf("List(ListOptions{}) returned the IDs %v, which do not ascend", ids(got))
		return
	}
	st.diff("IDs of List(ListOptions{})", ids(want), ids(got))
}

func testListLimit(st *storeT) {
	want := byID(st.addN(10))
	gotPages := map[int][]int64{}
	wantPages := map[int][]int64{}
	for limit := 1; limit <= len(want)+2; limit++ {
		opts := petstore.ListOptions{Limit: limit}
		wantPages[limit] = ids(selectPets(want, opts))
		gotPages[limit] = ids(st.list(opts))
	}
	st.diff("IDs of List(ListOptions{Limit: key})", wantPages, gotPages)
}

func testListLimitZero(st *storeT) {
	// More pets than any page size a store might fall back to by mistake.
	want := byID(st.addN(150))
	st.diff("IDs of List(ListOptions{Limit: 0})", ids(want), ids(st.list(petstore.ListOptions{})))
	opts := petstore.ListOptions{Status: petstore.StatusPending}
	st.diff(fmt.Sprintf("IDs of List(%+v)", opts), ids(selectPets(want, opts)), ids(st.list(opts)))
}

func testListAfter(st *storeT) {
	want := byID(st.addN(10))
	afters := []int64{0, -1, math.MinInt64, math.MaxInt64}
	for _, p := range want {
		afters = append(afters, p.ID, p.ID-1)
	}
	gotPages := map[int64][]int64{}
	wantPages := map[int64][]int64{}
	for _, after := range afters {
		opts := petstore.ListOptions{After: after}
		wantPages[after] = ids(selectPets(want, opts))
		gotPages[after] = ids(st.list(opts))
	}
	st.diff("IDs of List(ListOptions{After: key})", wantPages, gotPages)
}

func testListStatus(st *storeT) {
	st.diffByStatus("List(ListOptions{Status: key})", byID(st.addN(12)))
}

func testListStatusNone(st *storeT) {
	var pets []petstore.NewPet
	for i, p := range newPets(12) {
		if i%4 != 0 {
			p.Status = "" // mostly pets without a status
		}
		pets = append(pets, p)
	}
	st.diffByStatus("List(ListOptions{Status: key}) of a store holding mostly pets without a status", byID(st.add(pets...)))
}

// diffByStatus lists the store under each valid status and compares every
// list with the pets of want that have that status.
func (st *storeT) diffByStatus(what string, want []petstore.Pet) {
	gotPages := map[petstore.Status][]petstore.Pet{}
	wantPages := map[petstore.Status][]petstore.Pet{}
	for _, s := range statuses[1:] {
		opts := petstore.ListOptions{Status: s}
		wantPages[s] = selectPets(want, opts)
		gotPages[s] = st.list(opts)
	}
	st.diff(what, wantPages, gotPages)
}

func testListCombined(st *storeT) {
	want := byID(st.addN(13))
	gotPages := map[string][]int64{}
	wantPages := map[string][]int64{}
	for _, s := range statuses {
		for _, after := range []int64{0, want[3].ID, want[8].ID} {
			for _, limit := range []int{0, 1, 2, 5} {
				opts := petstore.ListOptions{Status: s, After: after, Limit: limit}
				key := fmt.Sprintf("%+v", opts)
				wantPages[key] = ids(selectPets(want, opts))
				gotPages[key] = ids(st.list(opts))
			}
		}
	}
	st.diff("IDs of List(key)", wantPages, gotPages)
}

func testListEmpty(st *storeT) {
	const empty = "no pets, no error"
	got := map[string]string{}
	want := map[string]string{}
	probe := func(opts petstore.ListOptions) {
		key := fmt.Sprintf("%+v", opts)
		want[key] = empty
		pets, err := st.s.List(st.ctx, opts)
		switch {
		case err != nil:
			got[key] = "error: " + err.Error()
		case len(pets) > 0:
			got[key] = fmt.Sprintf("no error, %d pets: %+v", len(pets), pets)
		default:
			got[key] = empty
		}
	}
	probe(petstore.ListOptions{}) // the store is empty
	probe(petstore.ListOptions{Status: petstore.StatusAvailable, Limit: 1})
	added := st.add(
		petstore.NewPet{Name: "no status", CategoryID: 1},
		petstore.NewPet{Name: "available", CategoryID: 1, Status: petstore.StatusAvailable},
	)
	maxID := slices.Max(ids(added))
	probe(petstore.ListOptions{After: maxID})
	probe(petstore.ListOptions{After: math.MaxInt64})
	probe(petstore.ListOptions{Status: petstore.StatusPending})
	probe(petstore.ListOptions{Status: petstore.StatusSold, Limit: 5})
	probe(petstore.ListOptions{Status: petstore.StatusAvailable, After: maxID})
	st.diff("List(key) that selects no pet", want, got)
}

// paginate pages through List from opts.After with opts.Limit pets a page,
// calling between, when it is not nil, after each full page. It returns the
// pets visited in order, and stops when a page is not full or does not
// advance past the previous one.
func (st *storeT) paginate(opts petstore.ListOptions, between func(page int)) []petstore.Pet {
	var visited []petstore.Pet
	for page := 0; page < 100_000; page++ {
		got := st.list(opts)
		if len(got) == 0 {
			return visited
		}
		if last := got[len(got)-1].ID; last <= opts.After {
			st.errorf("paging: List(%+v) returned a page ending at ID %d, which does not advance past After", opts, last)
			return visited
		}
		visited = append(visited, got...)
		if len(got) < opts.Limit {
			return visited
		}
		opts.After = got[len(got)-1].ID
		if between != nil {
			between(page)
		}
	}
	st.errorf("paging: List(%+v) still returns full pages after 100000 pages", opts)
	return visited
}

func testPaginate(st *storeT) {
	want := byID(st.addN(20))
	for _, limit := range []int{1, 2, 3, 7, 20, 25} {
		opts := petstore.ListOptions{Limit: limit}
		st.diff(fmt.Sprintf("IDs visited paging with Limit %d", limit), ids(want), ids(st.paginate(opts, nil)))
	}
	for _, s := range statuses[1:] {
		opts := petstore.ListOptions{Status: s, Limit: 2}
		st.diff(fmt.Sprintf("IDs visited paging with Status %q and Limit 2", s),
			ids(selectPets(want, petstore.ListOptions{Status: s})), ids(st.paginate(opts, nil)))
	}
}

func testPaginateWhileAdding(st *storeT) {
	added := st.addN(10)
	extra := newPets(20)[10:]
	visited := st.paginate(petstore.ListOptions{Limit: 3}, func(page int) {
		if page < len(extra) {
			added = append(added, st.add(extra[page])...)
		}
	})
	st.diff("IDs visited paging with Limit 3 while a pet is added after each page", ids(byID(added)), ids(visited))
}

// testPaginateConcurrentAdds hammers the store with goroutines that add
// pets while others page through List, each from the start, and checks
// that every pager visits every pet. A pager that misses a pet has seen a
// greater ID before the pet became visible: the store drew the ID before it
// made the pet visible (a database store that takes a sequence value and
// inserts later does), and another Add overtook it in the gap. The gap is
// short, so the test runs many adders and pagers at once, yielding between
// calls, for a number of Adds rather than for a time.
func testPaginateConcurrentAdds(st *storeT) {
	procs := runtime.GOMAXPROCS(0)
	// Enough writers to overtake each other between drawing an ID and
	// making the pet visible, and enough pagers that one of them lists in
	// most such gaps; pages long enough that a pager keeps up with the
	// newest pets, where the gaps are.
	writers := max(8, 4*procs)
	pagers := 2 * procs
	perWriter := max(4, 1024/writers) // about 1,000 pets in all
	const limit = 16
	var (
		mu        sync.Mutex
		added     = st.addN(10)
		writersWG sync.WaitGroup
		pagersWG  sync.WaitGroup
		start     = make(chan struct{})
		finished  atomic.Bool
		visited   = make([][]petstore.Pet, pagers)
	)
	for w := range writers {
		writersWG.Go(func() {
			<-start
			for i := range perWriter {
				p := petstore.NewPet{Name: fmt.Sprintf("writer %d pet %d", w, i), CategoryID: int64(w + 1), Status: statuses[i%len(statuses)]}
				got, _, err := st.s.Add(st.ctx, p, petstore.AddOptions{})
				if err != nil {
					st.errorf("Add(%+v) from writer %d: %v", p, w, err)
					return
				}
				mu.Lock()
				added = append(added, got)
				mu.Unlock()
				runtime.Gosched()
			}
		})
	}
	for r := range pagers {
		pagersWG.Go(func() {
			<-start
			opts := petstore.ListOptions{Limit: limit}
			for {
				done := finished.Load() // every Add has returned before this List
				page, err := st.s.List(st.ctx, opts)
				if err != nil {
					st.errorf("List(%+v) from pager %d while pets are being added: %v", opts, r, err)
					return
				}
				if len(page) > 0 {
					if last := page[len(page)-1].ID; last <= opts.After || !ascending(page) {
						st.errorf("paging: List(%+v) from pager %d returned the IDs %v, which do not ascend past After", opts, r, ids(page))
						return
					}
					visited[r] = append(visited[r], page...)
					opts.After = page[len(page)-1].ID
				}
				if len(page) < limit {
					if done {
						return
					}
					runtime.Gosched() // let the writers add more
				}
			}
		})
	}
	close(start)
	writersWG.Wait()
	finished.Store(true)
	pagersWG.Wait()
	if st.t.Failed() {
		return
	}
	want := ids(byID(added))
	for r, v := range visited {
		if missed := missedIDs(want, ids(v)); len(missed) > 0 {
			st.errorf("pager %d, paging with Limit %d while %d goroutines added pets, missed %d of %d pets, such as the IDs %v: each became visible after List had returned a greater ID",
				r, limit, writers, len(missed), len(want), missed[:min(len(missed), 10)])
		} else {
			st.diff(fmt.Sprintf("IDs visited by pager %d, paging with Limit %d while %d goroutines added pets", r, limit, writers), want, ids(v))
		}
	}
}

// missedIDs returns the IDs of want, which ascend, that got does not hold.
func missedIDs(want, got []int64) []int64 {
	seen := make(map[int64]bool, len(got))
	for _, id := range got {
		seen[id] = true
	}
	var missed []int64
	for _, id := range want {
		if !seen[id] {
			missed = append(missed, id)
		}
	}
	return missed
}
