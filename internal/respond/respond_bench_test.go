package respond

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
)

// benchWriter is a reusable http.ResponseWriter whose header map is cleared
// in place before each response, as net/http's is a new map per request:
// what a response costs in headers is what it puts into the map.
type benchWriter struct {
	header http.Header
	n      int
}

func (w *benchWriter) Header() http.Header         { return w.header }
func (w *benchWriter) WriteHeader(int)             {}
func (w *benchWriter) Write(p []byte) (int, error) { w.n += len(p); return len(p), nil }

// BenchmarkJSON writes a get's response (the JSON of a pet, and the three
// headers that a get adds) with JSON, which assigns shared header values to
// the map (impl=map), and with jsonSet, which sets the same headers with
// Header().Set (impl=set).
//
//	go test -run '^$' -bench 'BenchmarkJSON' -benchmem -count 6 ./internal/respond
func BenchmarkJSON(b *testing.B) {
	r := httptest.NewRequest(http.MethodGet, "/v1/pets/12345", nil)
	body := []byte(`{"id":12345,"name":"pet 12345","categoryId":5,"status":"available"}`)
	deprecation, sunset := []string{"@1767225600"}, []string{"Thu, 31 Dec 2026 00:00:00 GMT"}
	successor := []string{`<../pets>; rel="successor-version"`}
	b.Run("impl=map", func(b *testing.B) {
		w := &benchWriter{header: make(http.Header, 16)}
		b.ReportAllocs()
		for b.Loop() {
			clear(w.header)
			h := w.Header()
			h["Deprecation"] = deprecation
			h["Sunset"] = sunset
			h["Link"] = successor
			JSON(w, r, http.StatusOK, body)
		}
	})
	b.Run("impl=set", func(b *testing.B) {
		w := &benchWriter{header: make(http.Header, 16)}
		b.ReportAllocs()
		for b.Loop() {
			clear(w.header)
			h := w.Header()
			h.Set("Deprecation", deprecation[0])
			h.Set("Sunset", sunset[0])
			h.Set("Link", successor[0])
			jsonSet(w, r, http.StatusOK, body)
		}
	})
}

// jsonSet is JSON with its headers set by Header().Set.
func jsonSet(w http.ResponseWriter, r *http.Request, status int, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}
