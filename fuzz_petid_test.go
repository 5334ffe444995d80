package petstore_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/httpapi"
)

// fuzzPetIDWant is what GET on a path under /v1/pets/ must answer, as the
// fuzz oracle reads the wire table: the escaped path segment after
// /v1/pets/ must be one non-empty segment, or the path is unknown (404);
// it must percent-decode to a base-10 int64 without a plus sign, or it is
// an invalid parameter (400); then it names a pet (200) or none (404).
func fuzzPetIDWant(escapedSeg string, pets int) (status int, code httpapi.Code, id int64) {
	if escapedSeg == "" || strings.Contains(escapedSeg, "/") {
		return http.StatusNotFound, httpapi.CodeNotFound, 0
	}
	seg, err := url.PathUnescape(escapedSeg)
	if err != nil || strings.HasPrefix(seg, "+") {
		return http.StatusBadRequest, httpapi.CodeInvalidParameter, 0
	}
	id, err = strconv.ParseInt(seg, 10, 64)
	switch {
	case err != nil:
		return http.StatusBadRequest, httpapi.CodeInvalidParameter, 0
	case id < 1 || id > int64(pets):
		return http.StatusNotFound, httpapi.CodeNotFound, id
	}
	return http.StatusOK, "", id
}

// FuzzPetID sends GET requests for arbitrary petId segments, in two ways:
// as the raw request target that a server parses (targets that do not parse
// never reach a handler and are not tried), and as a decoded URL.Path set
// directly, which the handler sees escaped. Each gets exactly the answer of
// fuzzPetIDWant with a well-formed body, the pet itself for 200, and the
// deprecation headers whenever the path is the getPet route; the store is
// never changed.
func FuzzPetID(f *testing.F) {
	f.Add("1")
	f.Add("%31")
	f.Add("9223372036854775808")
	f.Fuzz(func(t *testing.T, seg string) {
		env := newEnv(t)
		before := snapshot(t, env.store)

		// As a request target: the segment is on the wire as it is.
		if u, err := url.ParseRequestURI("/v1/pets/" + seg); err == nil {
			r := httptest.NewRequest(http.MethodGet, "/v1/pets/1", nil)
			r.URL = u
			fuzzCheckPetID(t, env, before, r)
		}
		// As a decoded path: the handler sees it escaped by URL.EscapedPath.
		r := httptest.NewRequest(http.MethodGet, "/v1/pets/1", nil)
		r.URL.Path, r.URL.RawPath = "/v1/pets/"+seg, ""
		fuzzCheckPetID(t, env, before, r)
	})
}

// fuzzCheckPetID serves r, a GET under /v1/pets/ on env, and checks the
// answer against the oracle and the store against before.
func fuzzCheckPetID(t *testing.T, env testEnv, before []petstore.Pet, r *http.Request) {
	t.Helper()
	escaped := r.URL.EscapedPath()
	escapedSeg, ok := strings.CutPrefix(escaped, "/v1/pets/")
	if !ok {
		t.Fatalf("test bug: path %q is not under /v1/pets/", escaped)
	}
	r.Header.Set("Authorization", "Bearer "+testKey)
	w := env.serve(r)
	code := checkResponse(t, w)
	checkUnchanged(t, env.store, before)

	wantStatus, wantCode, id := fuzzPetIDWant(escapedSeg, len(before))
	if w.Code != wantStatus || code != wantCode {
		t.Fatalf("path %q: status %d %s, want %d %s", escaped, w.Code, w.Body, wantStatus, wantCode)
	}
	if wantStatus == http.StatusOK {
		if got, want := w.Body.String(), marshal(t, before[id-1]); got != want {
			t.Fatalf("path %q: body %s, want %s", escaped, got, want)
		}
	}
	isRoute := escapedSeg != "" && !strings.Contains(escapedSeg, "/")
	if got := w.Header().Get("Deprecation") != ""; got != isRoute {
		t.Fatalf("path %q: Deprecation header present = %v, want %v", escaped, got, isRoute)
	}
}
