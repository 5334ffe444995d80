package petstore_test

import "testing"

// perfAllocLimits are the most allocations a request may cost in the
// handler, served in process with a reused ResponseWriter and request
// (benchWriter, benchRequest), with benchPets pets in memstore.
var perfAllocLimits = []struct {
	op    string // a benchCases name
	limit float64
}{
	{"ListPets", 18},
	{"ListPetsByStatus", 18},
	{"ListPetsNextPage", 18},
	{"GetPet", 13},
	{"CreatePet", 65},
	{"Unauthorized", 4},
	{"InvalidToken", 4},
}

// TestPerfAllocs checks the allocations per request of the operations and
// of a 401 against perfAllocLimits, so that a change that adds some is seen.
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
			limit := l.limit
			t.Logf("%s: %v allocations per request", l.op, allocs)
			if allocs > limit {
				t.Errorf("%s: %v allocations per request, want at most %v", l.op, allocs, limit)
			}
		})
	}
}

func perfCase(t testing.TB, name string) benchCase {
	t.Helper()
	for _, c := range benchCases {
		if c.name == name {
			return c
		}
	}
	t.Fatalf("no benchmark case %s", name)
	return benchCase{}
}
