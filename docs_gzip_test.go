package petstore_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/docspage"
	"github.com/petstore-go/petstore/memstore"
)

// TestDocsGzip: a large file of the page goes gzip-compressed to a client
// that accepts gzip, with an ETag of its own, and as it is to one that does
// not; both say Vary: Accept-Encoding. The compressed body is the file.
func TestDocsGzip(t *testing.T) {
	h := newHandler(t, memstore.New(), petstore.WithDocs(docspage.Files()))
	get := func(acceptEncoding string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodGet, "/v1/docs/swagger-ui-bundle.js", nil)
		if acceptEncoding != "" {
			r.Header.Set("Accept-Encoding", acceptEncoding)
		}
		return serve(h, r)
	}
	plain := get("")
	if plain.Code != http.StatusOK || plain.Header().Get("Content-Encoding") != "" || plain.Header().Get("Vary") != "Accept-Encoding" {
		t.Fatalf("without Accept-Encoding: %d, Content-Encoding %q, Vary %q; want 200, none, Accept-Encoding",
			plain.Code, plain.Header().Get("Content-Encoding"), plain.Header().Get("Vary"))
	}
	for _, tt := range []struct {
		accept string
		gzip   bool
	}{
		{"gzip", true}, {"br, gzip, deflate", true}, {"GZIP;q=0.5", true}, {"*", true},
		{"identity", false}, {"gzip;q=0", false}, {"gzip; q=0.000", false}, {"br", false},
	} {
		w := get(tt.accept)
		gotGzip := w.Header().Get("Content-Encoding") == "gzip"
		if w.Code != http.StatusOK || gotGzip != tt.gzip || w.Header().Get("Vary") != "Accept-Encoding" {
			t.Errorf("Accept-Encoding %q: %d, Content-Encoding %q, Vary %q; want gzip %v", tt.accept, w.Code,
				w.Header().Get("Content-Encoding"), w.Header().Get("Vary"), tt.gzip)
			continue
		}
		if !gotGzip {
			continue
		}
		if w.Header().Get("ETag") == plain.Header().Get("ETag") {
			t.Errorf("Accept-Encoding %q: the compressed file has the ETag of the plain one", tt.accept)
		}
		zr, err := gzip.NewReader(w.Body)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(zr)
		if err != nil || !bytes.Equal(body, plain.Body.Bytes()) {
			t.Errorf("Accept-Encoding %q: the compressed body is not the file (%v)", tt.accept, err)
		}
		t.Logf("Accept-Encoding %q: %d bytes for a file of %d", tt.accept, w.Body.Len(), plain.Body.Len())
	}
}
