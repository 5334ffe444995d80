package petstore_test

import (
	"slices"
	"testing"
)

// perfAllocLimits are the most allocations a request may cost in the
// handler, served in process with a reused ResponseWriter and request
// (benchWriter, benchRequest), with benchPets pets in memstore.
var perfAllocLimits = []struct {
	op    string // a benchCases name
	limit float64
}{
	{"ListPets", 9},
	{"ListPetsByStatus", 9},
	{"ListPetsNextPage", 9},
	{"GetPet", 6},
	{"CreatePet", 8},
	{"Unauthorized", 3},
	{"InvalidToken", 3},
}

// TestPerfAllocs checks the allocations per request of the operations and
// of a 401: a list of 20 at most 9, a get at most 6, a create at most 8 and
// a 401 at most 3. Of these, APIKeys' context with the caller's principal
// costs 2 (the context and the string it holds), each store call's own
// context (storeCtx), which a Store may keep, costs 1, memstore's page 2 (a
// copy of the pets and one string of their names) and its pet 1 (the name),
// the ETag and Content-Length values 2, and the Link or the Location value
// its string and its slice.
//
// Under the race detector, sync.Pool drops a quarter of what it is given, on
// purpose, so every limit is raised by raceAllowance, what the body buffer
// costs to make again; .ci/run also runs this test without the race
// detector, where the limits hold exactly.
const raceAllowance = 2

func TestPerfAllocs(t *testing.T) {
	store := benchStore(t, benchPets)
	h := benchHandler(t, store)
	for _, l := range perfAllocLimits {
		t.Run(l.op, func(t *testing.T) {
			i := slices.IndexFunc(benchCases, func(c benchCase) bool { return c.name == l.op })
			if i < 0 {
				t.Fatalf("no benchmark case %s", l.op)
			}
			c := benchCases[i]
			req := c.request()
			w := newBenchWriter()
			status := 0
			allocs := testing.AllocsPerRun(1000, func() {
				w.reset()
				h.ServeHTTP(w, req.request())
				status = w.status
			})
			if status != c.want {
				t.Fatalf("status %d, want %d", status, c.want)
			}
			limit := l.limit
			if raceEnabled {
				limit += raceAllowance
			}
			t.Logf("%s: %v allocations per request", l.op, allocs)
			if allocs > limit {
				t.Errorf("%s: %v allocations per request, want at most %v", l.op, allocs, limit)
			}
		})
	}
}
