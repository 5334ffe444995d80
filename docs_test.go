package petstore_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/gorilla/mux"

	"github.com/petstore-go/petstore"
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
// page's Content-Security-Policy.
func TestDocsPageUnderAHostRouter(t *testing.T) {
	for _, base := range []string{"/v1", "/api/animals/v1", ""} {
		t.Run("base="+base, func(t *testing.T) {
			r := mux.NewRouter()
			r.PathPrefix("/host").Handler(http.StripPrefix("/host", newHandler(t, memstore.New(), petstore.WithBasePath(base), petstore.WithDocs(true))))
			srv := httptest.NewServer(r)
			defer srv.Close()
			page := srv.URL + "/host" + base + petstore.DocsPath

			resp, body := fetch(t, srv, page, nil)
			if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" {
				t.Fatalf("GET %s = %d %s", page, resp.StatusCode, resp.Header.Get("Content-Type"))
			}
			if got := resp.Header.Get("Content-Security-Policy"); got != docsCSP {
				t.Errorf("the page's policy is %q, want %q", got, docsCSP)
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
				resp, _ := fetch(t, srv, target, nil)
				if resp.StatusCode != 200 {
					t.Errorf("GET %s = %d", target, resp.StatusCode)
				}
				if p := resp.Header.Get("Content-Security-Policy"); p != docsCSP {
					t.Errorf("%s is served under policy %q", target, p)
				}
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
			if want := srv.URL + "/host" + base + petstore.OpenAPIPath; target != want {
				t.Errorf("the page reads %s, want %s", target, want)
			}
			if resp, _ := fetch(t, srv, target, nil); resp.StatusCode != 200 {
				t.Errorf("GET %s = %d", target, resp.StatusCode)
			}
		})
	}
}

// TestDocsFilesRevalidate checks that the page's files carry a strong ETag
// and no-cache, and that If-None-Match with the tag answers 304 with no
// body.
func TestDocsFilesRevalidate(t *testing.T) {
	srv := httptest.NewServer(newHandler(t, memstore.New(), petstore.WithDocs(true)))
	defer srv.Close()
	for _, path := range []string{"/v1/docs", "/v1/docs/swagger-ui-bundle.js"} {
		resp, _ := fetch(t, srv, srv.URL+path, nil)
		tag := resp.Header.Get("ETag")
		if !regexp.MustCompile(`^"[^"]+"$`).MatchString(tag) || resp.Header.Get("Cache-Control") != "no-cache" {
			t.Errorf("GET %s: ETag %q, Cache-Control %q; want a strong tag and no-cache", path, tag, resp.Header.Get("Cache-Control"))
		}
		resp, body := fetch(t, srv, srv.URL+path, http.Header{"If-None-Match": {tag}})
		if resp.StatusCode != 304 || body != "" {
			t.Errorf("GET %s with If-None-Match %s = %d with %d bytes, want 304 and no body", path, tag, resp.StatusCode, len(body))
		}
	}
}

// TestDocsOff checks that the page is off by default and when turned off:
// its path is unknown like any other, so it is answered 401 without a key
// and 404 with one.
func TestDocsOff(t *testing.T) {
	for name, opts := range map[string][]petstore.Option{
		"default":         nil,
		"WithDocs(false)": {petstore.WithDocs(false)},
	} {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(newHandler(t, memstore.New(), opts...))
			defer srv.Close()
			for _, path := range []string{"/v1/docs", "/v1/docs/init.js"} {
				if resp, _ := fetch(t, srv, srv.URL+path, nil); resp.StatusCode != 401 {
					t.Errorf("GET %s without a key = %d, want 401", path, resp.StatusCode)
				}
				resp, _ := fetch(t, srv, srv.URL+path, http.Header{"Authorization": {"Bearer " + testKey}})
				if resp.StatusCode != 404 {
					t.Errorf("GET %s with a key = %d, want 404", path, resp.StatusCode)
				}
			}
		})
	}
}

// TestDocsNeedTheDocument checks that New refuses the page without the
// document it reads, and names the option that fixes it.
func TestDocsNeedTheDocument(t *testing.T) {
	_, err := petstore.New(petstore.WithStore(memstore.New()), petstore.WithAuthenticator(petstore.APIKeys(testKey)),
		petstore.WithDocs(true), petstore.WithOpenAPI(false))
	if err == nil || !strings.Contains(err.Error(), "WithOpenAPI(false)") {
		t.Errorf("New(WithDocs(true), WithOpenAPI(false)) = %v, want an error naming WithOpenAPI(false)", err)
	}
}
