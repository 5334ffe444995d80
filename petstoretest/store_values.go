package petstoretest

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/petstore-go/petstore"
)

func testAddInvalid(st *storeT) {
	valid := petstore.NewPet{Name: "valid", CategoryID: 1}
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
		p := invalid[why]
		if _, _, err := st.s.Add(st.ctx, p, petstore.AddOptions{}); !errors.Is(err, petstore.ErrInvalidPet) {
			st.errorf("Add of a pet with a %s returned error %v, not one wrapping ErrInvalidPet", why, err)
		}
	}
	added := st.add(valid)
	st.diff("List after the invalid Adds and one valid one", added, st.list(petstore.ListOptions{}))
}

func testIDsPositive(st *storeT) {
	notPositive := map[string]int64{}
	for _, p := range st.addN(20) {
		if p.ID <= 0 {
			notPositive[p.Name] = p.ID
		}
	}
	st.diff("IDs that are not positive, by the name of the pet that Add returned them for", map[string]int64{}, notPositive)
}

func testIDsUnique(st *storeT) {
	added := st.addN(100)
	st.diff("IDs that Add returned more than once, with their counts", map[int64]int{}, duplicates(added))
	st.diff("IDs that List returns more than once, with their counts", map[int64]int{}, duplicates(st.list(petstore.ListOptions{})))
}

func testIDsUniqueConcurrent(st *storeT) {
	const n = 64
	added := make([]petstore.Pet, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			p := petstore.NewPet{Name: fmt.Sprintf("concurrent %d", i), CategoryID: int64(i + 1), Status: statuses[i%len(statuses)]}
			got, _, err := st.s.Add(st.ctx, p, petstore.AddOptions{})
			if err != nil {
				st.errorf("Add(%+v) from goroutine %d: %v", p, i, err)
				return
			}
			added[i] = got
		})
	}
	close(start)
	wg.Wait()
	if st.t.Failed() {
		return
	}
	for i, p := range added {
		if p.ID <= 0 {
			st.errorf("Add from goroutine %d returned ID %d", i, p.ID)
		}
	}
	st.diff("IDs that concurrent Adds returned more than once, with their counts", map[int64]int{}, duplicates(added))
	st.diff("List after the concurrent Adds", byID(added), st.list(petstore.ListOptions{}))
}

func testIDsGrow(st *storeT) {
	pets := newPets(4)
	a := st.add(pets[0])[0]
	if _, err := st.s.Get(st.ctx, a.ID); err != nil {
		st.fatalf("Get(%d) of a pet just added: %v", a.ID, err)
	}
	b := st.add(pets[1])[0]
	if b.ID <= a.ID {
		st.errorf("Get returned the pet with ID %d, then Add returned ID %d, which is not greater", a.ID, b.ID)
	}
	listed := st.list(petstore.ListOptions{})
	c := st.add(pets[2])[0]
	for _, p := range listed {
		if c.ID <= p.ID {
			st.errorf("List returned the pet with ID %d, then Add returned ID %d, which is not greater", p.ID, c.ID)
		}
	}
	st.diff("List after the Adds", []petstore.Pet{a, b, c}, st.list(petstore.ListOptions{}))
}

func testRoundTrip(st *storeT) {
	pets := samplePets()
	var added []petstore.Pet
	for i, p := range pets {
		got := st.add(p)[0]
		st.diff(fmt.Sprintf("Add of sample pet %d (name %.20q) returned", i, p.Name), p, got.NewPet)
		added = append(added, got)
	}
	for _, want := range added {
		got, err := st.s.Get(st.ctx, want.ID)
		if err != nil {
			st.errorf("Get(%d) of a pet that Add returned: %v", want.ID, err)
			continue
		}
		st.diff(fmt.Sprintf("Get(%d) after Add returned it", want.ID), want, got)
	}
	// List under a filter returns the same values too; list-status,
	// which relies on this clause, checks that.
	st.diff("List after Add returned the pets", byID(added), st.list(petstore.ListOptions{}))
}

func testNoAlias(st *storeT) {
	want := byID(st.add(samplePets()...))

	// Change every pet that List returned.
	all := st.list(petstore.ListOptions{})
	for i := range all {
		all[i].ID = -1
		all[i].Name = "changed by the caller"
		all[i].CategoryID = 7
		all[i].Status = petstore.StatusSold
	}
	// Append to a page: a store that returned a slice of its own array
	// would find the appended pet in it.
	page := st.list(petstore.ListOptions{Limit: 2})
	page = append(page, petstore.Pet{ID: -2, NewPet: petstore.NewPet{Name: "appended by the caller", CategoryID: 9}})
	page[0].Name = "changed by the caller"
	// Change a pet that Get returned.
	if p, err := st.s.Get(st.ctx, want[0].ID); err == nil {
		p.Name = "changed by the caller"
	}

	st.diff("List after the caller changed pets that List and Get returned", want, st.list(petstore.ListOptions{}))
	for _, p := range want {
		got, err := st.s.Get(st.ctx, p.ID)
		if err != nil {
			st.errorf("Get(%d): %v", p.ID, err)
			continue
		}
		st.diff(fmt.Sprintf("Get(%d) after the caller changed pets that List and Get returned", p.ID), p, got)
	}
}

// wantNotFound describes the outcome that Get must have for an unknown ID.
const wantNotFound = "an error wrapping petstore.ErrNotFound"

func testGetUnknown(st *storeT) {
	got := map[int64]string{}
	want := map[int64]string{}
	probe := func(id int64) {
		want[id] = wantNotFound
		p, err := st.s.Get(st.ctx, id)
		if errors.Is(err, petstore.ErrNotFound) {
			got[id] = wantNotFound
		} else {
			got[id] = outcome(p, err)
		}
	}

	probe(1) // the store is empty
	added := st.addN(5)
	maxID := slices.Max(ids(added))
	for _, id := range []int64{0, -1, -maxID, math.MinInt64, math.MaxInt64} {
		probe(id)
	}
	if maxID < math.MaxInt64 {
		probe(maxID + 1)
	}
	st.diff("Get of IDs that no pet has", want, got)
}
