package petstoretest

import (
	"cmp"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"

	"github.com/petstore-go/petstore"
)

// A listPage is one page of GET /pets.
type listPage struct {
	x    *exchange
	pets []petstore.Pet
	next *url.URL // the next Link resolved, or nil on the last page
}

// walk fetches the page at start and follows its next links, calling visit
// with each page, until a page has no next link or visit returns false. It
// checks every page against clauseList, and the order of the pets across
// pages, and tells whether all checks passed; it stops at the first page
// that does not advance, so that a broken Link cannot make it loop.
func (st *serverT) walk(start string, visit func(p listPage) bool) bool {
	list, err := url.Parse(st.url("/pets"))
	if err != nil {
		st.t.Fatalf("petstoretest: %v", err)
	}
	u := start
	var last int64
	for n := 0; ; n++ {
		x := st.send(http.MethodGet, u, nil)
		if x.resp.StatusCode != http.StatusOK {
			st.errorfClause(clauseList, "%s: status (-want +got):\n-\t%d\n+\t%d\nbody: %s", x, http.StatusOK, x.resp.StatusCode, snippet(x.body))
			return false
		}
		pets, ok := st.pets(clauseList, x)
		if !ok {
			return false
		}
		limit := petstore.DefaultPageSize
		if l, err := strconv.Atoi(x.req.URL.Query().Get("limit")); err == nil {
			limit = l
		}
		if len(pets) > limit {
			st.errorfClause(clauseList, "%s: %d pets on a page of at most %d", x, len(pets), limit)
			return false
		}
		for i, p := range pets {
			if (n > 0 || i > 0) && p.ID <= last {
				st.errorfClause(clauseList, "%s: pet %d comes after pet %d: the pets are not ascending by id across pages", x, p.ID, last)
				return false
			}
			last = p.ID
		}
		next := st.linkRel(x, "next")
		if next != nil {
			if len(pets) == 0 {
				st.errorfClause(clauseList, "%s: an empty page has a next Link %q", x, x.resp.Header.Values("Link"))
				return false
			}
			if next.Scheme != list.Scheme || next.Host != list.Host || next.Path != list.Path {
				st.errorfClause(clauseList, "%s: the next Link %q resolves to %s, which is not the list of pets %s", x, x.resp.Header.Values("Link"), next, list)
				return false
			}
		}
		if !visit(listPage{x: x, pets: pets, next: next}) || next == nil {
			return true
		}
		u = next.String()
	}
}

// collect walks from start and returns the pets of created that it visits,
// in the order visited.
func (st *serverT) collect(start string, created map[int64]petstore.Pet, between func(page int)) []petstore.Pet {
	var visited []petstore.Pet
	page := 0
	st.walk(start, func(p listPage) bool {
		for _, pet := range p.pets {
			if _, ok := created[pet.ID]; ok {
				visited = append(visited, pet)
			}
		}
		if between != nil && p.next != nil {
			between(page)
		}
		page++
		return true
	})
	return visited
}

// startAt returns the URL of the page of the list that query selects which
// holds the pet with the given ID or, when that pet is not listed, the
// first pet after it, with the page size set to limit. Paging with small
// pages from there, instead of from the start of a store that may hold many
// pets, takes few requests.
func (st *serverT) startAt(query string, id int64, limit int) string {
	var at *url.URL
	st.walk(st.url("/pets?"+query), func(p listPage) bool {
		if len(p.pets) > 0 && p.pets[len(p.pets)-1].ID >= id {
			at = p.x.req.URL
			return false
		}
		return true
	})
	if at == nil {
		st.t.FailNow() // walk has reported why
	}
	u := *at
	q := u.Query()
	q.Set("limit", strconv.Itoa(limit))
	u.RawQuery = q.Encode()
	return u.String()
}

// createEach creates one pet for each status and one without, n times over,
// and returns them by ID.
func (st *serverT) createEach(n int) map[int64]petstore.Pet {
	created := map[int64]petstore.Pet{}
	for i := range n {
		for _, s := range statuses {
			label := string(s)
			if s == "" {
				label = "no status"
			}
			p := st.create(petstore.NewPet{Name: st.name(label), CategoryID: int64(i + 1), Status: s})
			created[p.ID] = p
		}
	}
	return created
}

// sortedPets returns the pets of m that keep returns true for, by ID.
func sortedPets(m map[int64]petstore.Pet, keep func(petstore.Pet) bool) []petstore.Pet {
	var out []petstore.Pet
	for _, p := range m {
		if keep == nil || keep(p) {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b petstore.Pet) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

func httpListDefaultLimit(st *serverT) {
	for range petstore.DefaultPageSize + 1 {
		st.create(petstore.NewPet{Name: st.name("default page"), CategoryID: 1})
	}
	x := st.send(http.MethodGet, st.url("/pets"), nil)
	if !st.wantStatus(x, http.StatusOK) {
		return
	}
	pets, ok := st.pets(st.clause, x)
	if !ok {
		return
	}
	st.diff(fmt.Sprintf("%s: the number of pets on the first page of a store with more than %d", x, petstore.DefaultPageSize), petstore.DefaultPageSize, len(pets))
	if st.linkRel(x, "next") == nil {
		st.errorf("%s: no next Link, though more pets follow: Link %q", x, x.resp.Header.Values("Link"))
	}
}

func httpListLimit(st *serverT) {
	for range 3 {
		st.create(petstore.NewPet{Name: st.name("limited"), CategoryID: 1})
	}
	for _, tc := range []struct {
		query string
		want  int
	}{
		{"limit=1", 1},
		{"limit=2", 2},
		{"limit=%31", 1}, // "1", percent-encoded
	} {
		x := st.send(http.MethodGet, st.url("/pets?"+tc.query), nil)
		if !st.wantStatus(x, http.StatusOK) {
			continue
		}
		if pets, ok := st.pets(st.clause, x); ok {
			st.diff(fmt.Sprintf("%s: the number of pets of a store with more", x), tc.want, len(pets))
		}
		if st.linkRel(x, "next") == nil {
			st.errorf("%s: no next Link, though more pets follow: Link %q", x, x.resp.Header.Values("Link"))
		}
	}
	x := st.send(http.MethodGet, st.url("/pets?limit=100"), nil)
	if st.wantStatus(x, http.StatusOK) {
		if pets, ok := st.pets(st.clause, x); ok && len(pets) > 100 {
			st.errorf("%s: %d pets", x, len(pets))
		} else if ok && len(pets) < 100 && st.linkRel(x, "next") != nil {
			st.errorf("%s: %d pets and a next Link %q: the page is not full, so no more follow", x, len(pets), x.resp.Header.Values("Link"))
		}
	}
}

func httpListPagination(st *serverT) {
	created := st.createEach(2)
	visited := st.collect(st.url("/pets?limit=100"), created, nil)
	st.diff("the pets created, as visited paging with limit=100 from the start", sortedPets(created, nil), visited)
}

func httpListPaginationWhileAdding(st *serverT) {
	created := st.createEach(1)
	first := sortedPets(created, nil)[0].ID
	start := st.startAt("limit=100", first, 2)
	visited := st.collect(start, created, func(page int) {
		if page < 4 {
			p := st.create(petstore.NewPet{Name: st.name("added between pages"), CategoryID: 1, Status: statuses[page%len(statuses)]})
			created[p.ID] = p
		}
	})
	st.diff(fmt.Sprintf("the pets created, as visited paging from %s while a pet is added between pages", start), sortedPets(created, nil), visited)
}

func httpListStatus(st *serverT) {
	created := st.createEach(2)
	for _, s := range statuses[1:] {
		want := sortedPets(created, func(p petstore.Pet) bool { return p.Status == s })
		check := func(start string) {
			var visited []petstore.Pet
			var others []petstore.Pet // pets listed that do not have the status
			st.walk(start, func(p listPage) bool {
				for _, pet := range p.pets {
					if pet.Status != s {
						others = append(others, pet)
					}
					if _, ok := created[pet.ID]; ok {
						visited = append(visited, pet)
					}
				}
				return true
			})
			st.diff(fmt.Sprintf("pets without status %q listed paging from %s", s, start), []petstore.Pet{}, others)
			st.diff(fmt.Sprintf("the pets created with status %q, as visited paging from %s", s, start), want, visited)
		}
		check(st.url("/pets?limit=100&status=" + string(s)))
		check(st.startAt("limit=100&status="+string(s), want[0].ID, 1))
	}
}
