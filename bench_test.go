package petstore_test

import (
	"bytes"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/memstore"
)

// The handler benchmarks serve one request again and again in process, with
// a ResponseWriter and a *http.Request that are reused, so that allocs/op
// counts the handler's allocations and nothing else. Each has a sub-benchmark
// impl=petstore, the handler over memstore with benchPets pets, and
// impl=baseline, a bare handler that writes the same status, headers and body
// from memory. Compare them with
//
//	go test -run '^$' -bench . -benchmem -count 10 . > bench.txt
//	benchstat -col /impl bench.txt

// benchPets is the number of pets the handler benchmarks run against.
const benchPets = 100_000

// benchKey is the API key of the benchmarks.
const benchKey = "bench-key-0123456789"

// benchWriter is a reusable http.ResponseWriter: reset clears its header map
// in place and the body is counted, not kept.
type benchWriter struct {
	header http.Header
	status int
	n      int
}

func newBenchWriter() *benchWriter { return &benchWriter{header: make(http.Header, 16)} }

func (w *benchWriter) Header() http.Header { return w.header }

func (w *benchWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}

func (w *benchWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	w.n += len(p)
	return len(p), nil
}

// SetReadDeadline accepts the body's read deadline, as a server's writer
// does.
func (w *benchWriter) SetReadDeadline(time.Time) error { return nil }

func (w *benchWriter) reset() {
	clear(w.header)
	w.status = 0
	w.n = 0
}

// benchRequest is a request that can be served any number of times: its
// body, if any, is rewound before each.
type benchRequest struct {
	r    *http.Request
	body []byte
	rd   *bytes.Reader
}

// request returns the request, ready to be served again.
func (br *benchRequest) request() *http.Request {
	if br.rd != nil {
		br.rd.Reset(br.body)
	}
	return br.r
}

// benchBaseline is the bare handler of a baseline: it writes a response
// captured from the petstore handler, from memory, with the same headers.
type benchBaseline struct {
	status int
	header http.Header
	body   []byte
}

func (b *benchBaseline) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	maps.Copy(w.Header(), b.header)
	w.WriteHeader(b.status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(b.body)
	}
}

// benchCapture serves req once with h and returns a baseline that writes
// what h wrote.
func benchCapture(tb testing.TB, h http.Handler, req *benchRequest) *benchBaseline {
	tb.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req.request())
	return &benchBaseline{status: rec.Code, header: rec.Result().Header, body: rec.Body.Bytes()}
}

// benchStore returns a memstore holding n pets: names "pet 1", "pet 2" and so
// on, in 7 categories, their statuses cycling through none, available,
// pending and sold.
func benchStore(tb testing.TB, n int) *memstore.Store {
	tb.Helper()
	s := memstore.New()
	statuses := []petstore.Status{"", petstore.StatusAvailable, petstore.StatusPending, petstore.StatusSold}
	for i := range n {
		mustAdd(tb, s, petstore.NewPet{Name: "pet " + strconv.Itoa(i+1), CategoryID: int64(i%7 + 1), Status: statuses[i%4]})
	}
	return s
}

// benchHandler returns the petstore handler over store, accepting benchKey.
func benchHandler(tb testing.TB, store petstore.Store) http.Handler {
	return newHandler(tb, store, petstore.WithAuthenticator(petstore.APIKeys(benchKey)))
}

// benchServe runs h on req b.N times and fails if a response's status is
// not want.
func benchServe(b *testing.B, h http.Handler, req *benchRequest, want int) {
	b.Helper()
	w := newBenchWriter()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		w.reset()
		h.ServeHTTP(w, req.request())
		if w.status != want {
			b.Fatalf("status %d, want %d", w.status, want)
		}
	}
}

// benchPair runs the sub-benchmarks impl=baseline and impl=petstore for one
// request. The baseline's response is captured from a handler over a store
// of its own, so that requests that add pets do not change what the
// petstore sub-benchmark measures.
func benchPair(b *testing.B, store petstore.Store, newReq func() *benchRequest, want int) {
	h := benchHandler(b, store)
	base := benchCapture(b, h, newReq())
	if base.status != want {
		b.Fatalf("captured status %d, want %d; body %s", base.status, want, base.body)
	}
	b.Run("impl=baseline", func(b *testing.B) { benchServe(b, base, newReq(), want) })
	b.Run("impl=petstore", func(b *testing.B) { benchServe(b, h, newReq(), want) })
}

// benchCase is one request of the handler benchmarks, and the most
// allocations that TestPerfAllocs lets it cost, when not 0.
type benchCase struct {
	name                      string
	method, target, key, body string
	header                    []string // names and values
	want                      int
	allocs                    float64
}

// request returns c's request.
func (c benchCase) request() *benchRequest {
	br := &benchRequest{body: []byte(c.body)}
	var body io.Reader
	if c.body != "" {
		br.rd = bytes.NewReader(br.body)
		body = br.rd
	}
	br.r = httptest.NewRequest(c.method, c.target, body)
	if c.key != "" {
		br.r.Header.Set("Authorization", "Bearer "+c.key)
	}
	for i := 0; i+1 < len(c.header); i += 2 {
		br.r.Header.Set(c.header[i], c.header[i+1])
	}
	return br
}

var benchCases = []benchCase{
	{name: "ListPets", method: http.MethodGet, target: "/v1/pets?limit=20", key: benchKey, want: http.StatusOK, allocs: 9},
	{name: "ListPetsByStatus", method: http.MethodGet, target: "/v1/pets?limit=20&status=available", key: benchKey, want: http.StatusOK, allocs: 9},
	{name: "ListPetsNextPage", method: http.MethodGet, target: "/v1/pets?limit=20&cursor=12kw", key: benchKey, want: http.StatusOK, allocs: 9},
	{name: "GetPet", method: http.MethodGet, target: "/v1/pets/12345", key: benchKey, want: http.StatusOK, allocs: 6},
	{name: "CreatePet", method: http.MethodPost, target: "/v1/pets", key: benchKey,
		body: `{"name":"Rex","categoryId":3,"status":"available"}`, header: []string{"Content-Type", "application/json"}, want: http.StatusCreated, allocs: 8},
	{name: "Unauthorized", method: http.MethodGet, target: "/v1/pets?limit=20", want: http.StatusUnauthorized, allocs: 3},
	{name: "InvalidToken", method: http.MethodGet, target: "/v1/pets?limit=20", key: "not-the-key", want: http.StatusUnauthorized, allocs: 3},
	{name: "InvalidParameter", method: http.MethodGet, target: "/v1/pets?limit=1000", key: benchKey, want: http.StatusBadRequest},
	{name: "InvalidBody", method: http.MethodPost, target: "/v1/pets", key: benchKey,
		body: `{"name":"Rex"}`, header: []string{"Content-Type", "application/json"}, want: http.StatusBadRequest},
	{name: "PetNotFound", method: http.MethodGet, target: "/v1/pets/999999999", key: benchKey, want: http.StatusNotFound},
}

// BenchmarkHandler serves every operation and the 400, 401 and 404 paths
// with benchPets pets stored, each beside its baseline.
func BenchmarkHandler(b *testing.B) {
	store := benchStore(b, benchPets)
	for _, c := range benchCases {
		b.Run("op="+c.name, func(b *testing.B) { benchPair(b, store, c.request, c.want) })
	}
}

// BenchmarkListScale serves the first page of 20 pets, with and without a
// status filter, from stores of 1,000 and 1,000,000 pets: the cost of a page
// must not grow with the number of pets stored.
func BenchmarkListScale(b *testing.B) {
	for _, n := range []int{1_000, 1_000_000} {
		store := benchStore(b, n)
		h := benchHandler(b, store)
		for _, filter := range []string{"none", "available"} {
			target := "/v1/pets?limit=20"
			if filter != "none" {
				target += "&status=" + filter
			}
			b.Run("filter="+filter+"/pets="+strconv.Itoa(n), func(b *testing.B) {
				benchServe(b, h, benchCase{method: http.MethodGet, target: target, key: benchKey}.request(), http.StatusOK)
			})
		}
	}
}

// TestPerfAllocs checks the allocations per request (benchCase.allocs),
// served in process with a reused ResponseWriter and request, with benchPets
// pets in memstore, of the operations and of a 401: a list of 20 at most 9, a get at most 6, a create at most 8 and
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
	for _, c := range benchCases {
		if c.allocs == 0 {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
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
			limit := c.allocs
			if raceEnabled {
				limit += raceAllowance
			}
			t.Logf("%s: %v allocations per request", c.name, allocs)
			if allocs > limit {
				t.Errorf("%s: %v allocations per request, want at most %v", c.name, allocs, limit)
			}
		})
	}
}
