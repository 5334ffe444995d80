package petstore_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
)

// BenchmarkConditional serves a full page of 20 and of 100 pets, and a pet,
// without If-None-Match (200 with the body) and with the ETag of the
// answer (304 without one): in process, where it is the handler's cost
// alone, and through a real loopback connection with net/http's client,
// where it is what a client sees.
//
//	go test -run '^$' -bench BenchmarkConditional -benchmem -count 3 .
func BenchmarkConditional(b *testing.B) {
	store := benchStore(b, 10_000)
	h := benchHandler(b, store)
	srv := httptest.NewServer(h)
	defer srv.Close()
	for _, c := range []struct{ name, target string }{
		{"page=20", "/v1/pets?limit=20&cursor=rs"},
		{"page=100", "/v1/pets?limit=100&cursor=rs"},
		{"pet", "/v1/pets/1234"},
	} {
		target := c.target
		first := newBenchRequest(http.MethodGet, target, benchKey, nil)
		w := newBenchWriter()
		h.ServeHTTP(w, first.request())
		tag := w.header.Get("ETag")
		if tag == "" {
			b.Fatalf("GET %s has no ETag", target)
		}
		for _, cond := range []bool{false, true} {
			var header []string
			want := http.StatusOK
			if cond {
				header, want = []string{"If-None-Match", tag}, http.StatusNotModified
			}
			name := "get=" + c.name + "/if-none-match=" + strconv.FormatBool(cond)
			b.Run(name+"/via=process", func(b *testing.B) {
				benchServe(b, h, newBenchRequest(http.MethodGet, target, benchKey, nil, header...), want)
			})
			b.Run(name+"/via=loopback", func(b *testing.B) {
				req, err := http.NewRequest(http.MethodGet, srv.URL+target, nil)
				if err != nil {
					b.Fatal(err)
				}
				req.Header.Set("Authorization", "Bearer "+benchKey)
				if cond {
					req.Header.Set("If-None-Match", tag)
				}
				c := srv.Client()
				var bytes int64
				b.ReportAllocs()
				for b.Loop() {
					resp, err := c.Do(req)
					if err != nil {
						b.Fatal(err)
					}
					n, _ := io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					bytes += n
					if resp.StatusCode != want {
						b.Fatalf("status %d, want %d", resp.StatusCode, want)
					}
				}
				b.ReportMetric(float64(bytes)/float64(b.N), "body-B/op")
			})
		}
	}
}
