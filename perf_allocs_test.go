package petstore_test

import "testing"

// perfAllocLimits are the most allocations a request may cost in the
// handler, served in process with a reused ResponseWriter and request
// (benchWriter, benchRequest), with benchPets pets in memstore.
var perfAllocLimits = []struct {
	op    string // a benchCases name
	limit float64
}{
	{"ListPets", 13},
	{"ListPetsByStatus", 13},
	{"ListPetsNextPage", 13},
	{"GetPet", 9},
	{"CreatePet", 12},
	{"Unauthorized", 3},
	{"InvalidToken", 3},
}

// TestPerfAllocs checks the allocations per request of the operations and
// of a 401: a list of 20 at most 13, a get at most 9, a create at most 12
// and a 401 at most 3. Of these, each request's context with the caller's
// principal (context.WithValue) costs 1, each store call's context under the
// store deadline (context.WithTimeout), which a Store may keep, costs 4, the
// buffer that a body is read or encoded into costs 1, and each header value
// that depends on the answer (ETag, Content-Length, Link, Location) costs
// its string and its slice.
func TestPerfAllocs(t *testing.T) {
	store := benchStore(t, benchPets)
	h := benchHandler(t, store)
	for _, l := range perfAllocLimits {
		t.Run(l.op, func(t *testing.T) {
			c := perfCase(t, l.op)
			var body []byte
			if c.body != "" {
				body = []byte(c.body)
			}
			req := newBenchRequest(c.method, c.target, c.key, body, c.header...)
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
			t.Logf("%s: %v allocations per request", l.op, allocs)
			if allocs > l.limit {
				t.Errorf("%s: %v allocations per request, want at most %v", l.op, allocs, l.limit)
			}
		})
	}
}

func perfCase(t *testing.T, name string) benchCase {
	t.Helper()
	for _, c := range benchCases {
		if c.name == name {
			return c
		}
	}
	t.Fatalf("no benchmark case %s", name)
	return benchCase{}
}
