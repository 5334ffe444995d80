package petstore_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
	"github.com/gorilla/mux"
	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/docspage"
	"github.com/petstore-go/petstore/internal/wire"
	"github.com/petstore-go/petstore/memstore"
)

// docsCSP is the policy that the page and its files must be served under.
const docsCSP = "default-src 'self'; img-src 'self' data:; base-uri 'none'; frame-ancestors 'none'"

// fetch GETs target from srv without credentials, with header, and returns
// the response with its body read.
func fetch(t *testing.T, srv *httptest.Server, target string, header http.Header) (*http.Response, string) {
	t.Helper()
	r, err := http.NewRequest(http.MethodGet, target, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		r.Header[k] = v
	}
	resp, err := srv.Client().Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

// TestDocsPageUnderAHostRouter serves the page under a base path mounted in
// a gorilla/mux router, as a host would, and follows every reference of the
// page (and of its start-up script, to the document) relatively, as a
// browser does: each must be served, without credentials, under the
// page's Content-Security-Policy, ready to be revalidated.
func TestDocsPageUnderAHostRouter(t *testing.T) {
	for _, base := range []string{"/v1", "/api/animals/v1", ""} {
		t.Run("base="+base, func(t *testing.T) {
			r := mux.NewRouter()
			r.PathPrefix("/host").Handler(http.StripPrefix("/host", newHandler(t, memstore.New(), petstore.WithBasePath(base), petstore.WithDocs(docspage.Files()))))
			srv := newServer(t, r)
			page := srv.URL + "/host" + base + wire.DocsPath

			// get GETs a file of the page, which must come under the page's
			// policy with a strong ETag and no-cache, and answer 304 with no
			// body to If-None-Match with the tag.
			get := func(target string) (*http.Response, string) {
				t.Helper()
				resp, body := fetch(t, srv, target, nil)
				tag := resp.Header.Get("ETag")
				if p := resp.Header.Get("Content-Security-Policy"); resp.StatusCode != 200 || p != docsCSP || !regexp.MustCompile(`^"[^"]+"$`).MatchString(tag) ||
					resp.Header.Get("Cache-Control") != "no-cache" {
					t.Errorf("GET %s = %d, policy %q, ETag %q, Cache-Control %q; want 200, %q, a strong tag and no-cache", target, resp.StatusCode, p, tag, resp.Header.Get("Cache-Control"), docsCSP)
				}
				if again, b := fetch(t, srv, target, http.Header{"If-None-Match": {tag}}); again.StatusCode != 304 || b != "" {
					t.Errorf("GET %s with If-None-Match %s = %d with %d bytes, want 304 and no body", target, tag, again.StatusCode, len(b))
				}
				return resp, body
			}
			resp, body := get(page)
			if resp.Header.Get("Content-Type") != "text/html; charset=utf-8" {
				t.Fatalf("GET %s = %d %s", page, resp.StatusCode, resp.Header.Get("Content-Type"))
			}
			// The policy blocks inline scripts and styles, so the page has none.
			if m := regexp.MustCompile(`<script>|<script [^>]*>[^<]|<style|style=|\son[a-z]+=`).FindString(body); m != "" {
				t.Errorf("the page holds inline script or style %q, which its policy blocks", m)
			}
			refs := regexp.MustCompile(`(?:src|href)="([^"]*)"`).FindAllStringSubmatch(body, -1)
			want := map[string]string{
				"docs/swagger-ui.css":       "text/css; charset=utf-8",
				"docs/favicon-32x32.png":    "image/png",
				"docs/swagger-ui-bundle.js": "text/javascript; charset=utf-8",
				"docs/init.js":              "text/javascript; charset=utf-8",
			}
			got := map[string]string{}
			for _, ref := range refs {
				target := resolve(t, page, ref[1])
				if !strings.HasPrefix(target, srv.URL+"/") {
					t.Errorf("the page loads %s from another origin", target)
				}
				resp, _ := get(target)
				got[ref[1]] = resp.Header.Get("Content-Type")
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("the page's references and their Content-Type (-want +got):\n%s", diff)
			}

			_, script := fetch(t, srv, resolve(t, page, "docs/init.js"), nil)
			doc := regexp.MustCompile(`url: "([^"]*)"`).FindStringSubmatch(script)
			if doc == nil {
				t.Fatalf("the start-up script names no document:\n%s", script)
			}
			target := resolve(t, page, doc[1])
			if want := srv.URL + "/host" + base + wire.OpenAPIPath; target != want {
				t.Errorf("the page reads %s, want %s", target, want)
			}
			if resp, _ := fetch(t, srv, target, nil); resp.StatusCode != 200 {
				t.Errorf("GET %s = %d", target, resp.StatusCode)
			}
		})
	}
}

// TestDocsPageOfTheHost serves a page of the host's own, with a file in a
// directory, and checks that each file is served at its path below the
// page's, byte for byte, with its Content-Type and the page's policy.
func TestDocsPageOfTheHost(t *testing.T) {
	page := fstest.MapFS{
		"index.html":      {Data: []byte(`<script src="docs/js/page.js"></script>`)},
		"js/page.js":      {Data: []byte(`document.title = "pets";`)},
		"style/page.css":  {Data: []byte(`body { margin: 0 }`)},
		"images/logo.png": {Data: []byte("\x89PNG")},
	}
	srv := newServer(t, newHandler(t, memstore.New(), petstore.WithDocs(page)))
	for path, want := range map[string]struct{ contentType, body string }{
		"/v1/docs":                 {"text/html; charset=utf-8", string(page["index.html"].Data)},
		"/v1/docs/js/page.js":      {"text/javascript; charset=utf-8", string(page["js/page.js"].Data)},
		"/v1/docs/style/page.css":  {"text/css; charset=utf-8", string(page["style/page.css"].Data)},
		"/v1/docs/images/logo.png": {"image/png", string(page["images/logo.png"].Data)},
	} {
		resp, body := fetch(t, srv, srv.URL+path, nil)
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != want.contentType || body != want.body {
			t.Errorf("GET %s = %d %s %q, want 200 %s %q", path, resp.StatusCode, resp.Header.Get("Content-Type"), body, want.contentType, want.body)
		}
		if got := resp.Header.Get("Content-Security-Policy"); got != docsCSP {
			t.Errorf("GET %s: policy %q, want %q", path, got, docsCSP)
		}
	}
	if resp, _ := fetch(t, srv, srv.URL+"/v1/docs/index.html", http.Header{"Authorization": {"Bearer " + testKey}}); resp.StatusCode != 404 {
		t.Errorf("GET /v1/docs/index.html = %d, want 404: the page is served at /v1/docs only", resp.StatusCode)
	}
}

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
