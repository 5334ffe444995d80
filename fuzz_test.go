package petstore_test

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/httpapi"
)

// fuzzAuthKeys returns the keys of the auth fuzzer's handler: two at once,
// as during a rotation, one of them with every kind of token68 character.
func fuzzAuthKeys() []string { return []string{testKey, "K3y.two_~+/=="} }

// fuzzAuthWant is the oracle for the Authorization header: exactly one
// header of the Bearer scheme, matched in any case, one or more spaces and
// one of the keys is accepted; no header, several, another scheme or an
// empty token is "missing"; any other token is "invalid".
func fuzzAuthWant(values []string) (accepted, invalid bool) {
	if len(values) != 1 {
		return false, false
	}
	v := values[0]
	if len(v) < len("bearer ") || !strings.EqualFold(v[:len("bearer")], "bearer") || v[len("bearer")] != ' ' {
		return false, false
	}
	token := strings.TrimLeft(v[len("bearer"):], " ")
	if token == "" {
		return false, false
	}
	accepted = slices.Contains(fuzzAuthKeys(), token)
	return accepted, !accepted
}

// FuzzAuthorization sends GET /v1/pets with no, one or two arbitrary
// Authorization headers. Only the oracle's accepted headers get 200; every
// other request gets, header for header and byte for byte, the 401 of a
// request without the header ("missing"), the 401 of a wrong key
// ("invalid"), or the 401 of a header of another scheme with another
// credential (which names the scheme only when it is a registered one),
// whatever the header held, so nothing else of it is ever echoed. (TestWire
// checks the challenges of the first two.)
func FuzzAuthorization(f *testing.F) {
	f.Add(uint8(1), "Bearer "+testKey, "")
	f.Add(uint8(2), "Bearer "+testKey, "Bearer "+testKey)
	f.Add(uint8(1), "bEARER   K3y.two_~+/==", "")
	f.Fuzz(func(t *testing.T, n uint8, first, second string) {
		env := newEnv(t, petstore.WithAuthenticator(petstore.APIKeys(fuzzAuthKeys()...)))
		before := snapshot(t, env.store)
		get := func(authorization []string) *http.Request {
			return newRequest(t, http.MethodGet, "/v1/pets", "", http.Header{"Authorization": authorization})
		}
		missing := env.serve(get(nil))
		rejected := env.serve(get([]string{"Bearer not-a-key"}))

		values := []string{first, second}[:n%3]
		if len(values) == 0 {
			values = nil // no header
		}
		r := get(values)
		w := env.serve(r)
		code := checkResponse(t, w)
		checkUnchanged(t, env.store, before)

		accepted, invalid := fuzzAuthWant(values)
		if accepted {
			if w.Code != http.StatusOK {
				t.Fatalf("Authorization %q: status %d %s, want 200", values, w.Code, w.Body)
			}
			return
		}
		want := missing
		var se *httpapi.SchemeError
		if _, err := httpapi.BearerToken(r); errors.As(err, &se) {
			want = env.serve(get([]string{cmp.Or(se.Scheme, "Unregistered") + " credential"}))
		}
		if invalid {
			want = rejected
		}
		if w.Code != http.StatusUnauthorized || code != httpapi.CodeUnauthorized {
			t.Fatalf("Authorization %q: status %d %s, want 401", values, w.Code, w.Body)
		}
		if diff := gocmp.Diff(want.Header(), w.Header()); diff != "" {
			t.Fatalf("Authorization %q: headers differ from the reference 401 (-want +got):\n%s", values, diff)
		}
		if got, want := w.Body.String(), want.Body.String(); got != want {
			t.Fatalf("Authorization %q: body %s, want %s", values, got, want)
		}
	})
}

// fuzzMaxBody is the body limit of the body fuzzer's handler: small, so that
// the fuzzer reaches 413 too.
const fuzzMaxBody = 1024

// FuzzCreateBody sends arbitrary bodies to POST /v1/pets. Every answer is
// 201, 400 invalid_body or 413 payload_too_large with a well-formed body; a
// rejected body leaves the store as it was; an accepted body is stored as
// exactly the pet that encoding/json decodes from it; and a body that is the
// canonical encoding of a valid pet is accepted.
func FuzzCreateBody(f *testing.F) {
	f.Add([]byte(`{"name":"Rex","categoryId":1}`))
	f.Add([]byte(`{"name":"Rex","categoryId":1,"status":"sold"}`))
	f.Add([]byte(`{"name":"Rex","categoryId":1,"name":"Max"}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		env := newEnv(t, petstore.WithMaxBodyBytes(fuzzMaxBody))
		before := snapshot(t, env.store)

		w := env.serve(newRequest(t, http.MethodPost, "/v1/pets", string(body), http.Header{"Content-Type": {"application/json"}}))
		code := checkResponse(t, w)

		// A body that encoding/json writes for a valid pet must be accepted.
		var decoded petstore.NewPet
		decodeErr := json.Unmarshal(body, &decoded)
		canonical := decodeErr == nil && decoded.Validate() == nil && marshal(t, decoded) == string(body)

		switch {
		case len(body) > fuzzMaxBody:
			if w.Code != http.StatusRequestEntityTooLarge || code != httpapi.CodePayloadTooLarge {
				t.Fatalf("%d-byte body over the %d-byte limit: status %d %s, want 413 payload_too_large", len(body), fuzzMaxBody, w.Code, w.Body)
			}
			checkUnchanged(t, env.store, before)
		case w.Code == http.StatusBadRequest && code == httpapi.CodeInvalidBody:
			if canonical {
				t.Fatalf("canonical body of a valid pet rejected: %s", w.Body)
			}
			checkUnchanged(t, env.store, before)
		case w.Code == http.StatusCreated:
			if decodeErr != nil {
				t.Fatalf("accepted a body that encoding/json rejects (%v)", decodeErr)
			}
			if err := decoded.Validate(); err != nil {
				t.Fatalf("accepted a pet that is not valid: %v", err)
			}
			want := petstore.Pet{ID: int64(len(before) + 1), NewPet: decoded}
			if diff := gocmp.Diff(append(before, want), snapshot(t, env.store)); diff != "" {
				t.Fatalf("store after an accepted create (-want +got):\n%s", diff)
			}
			if got, wantBody := w.Body.String(), marshal(t, want); got != wantBody {
				t.Fatalf("response body %s, want %s", got, wantBody)
			}
			if got, wantLoc := w.Header().Get("Location"), "pets/"+strconv.FormatInt(want.ID, 10); got != wantLoc {
				t.Fatalf("Location = %q, want %q", got, wantLoc)
			}
		default:
			t.Fatalf("status %d %s; want 201, 400 invalid_body or 413", w.Code, w.Body)
		}
	})
}

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

// fuzzListQuery is what a query of GET /pets asks for, as the fuzz oracle
// reads it.
type fuzzListQuery struct {
	limit  int
	status petstore.Status
	after  int64
}

// fuzzParseQuery is the oracle for the query of GET /pets, written from the
// wire table rather than from the handler: parameters are separated by "&"
// only; keys and values are URL-decoded, and a key that does not decode is
// not one of ours; limit, status and cursor may each be given once; limit is
// 1 to 100 written in at most 18 ASCII digits; status is one of the three;
// cursor is the base-36 form of a positive int64, exactly as
// strconv.FormatInt writes it. Other parameters are ignored.
func fuzzParseQuery(raw string) (fuzzListQuery, bool) {
	q := fuzzListQuery{limit: petstore.DefaultPageSize}
	seen := map[string]bool{}
	for _, param := range strings.Split(raw, "&") {
		if param == "" {
			continue
		}
		k, v, _ := strings.Cut(param, "=")
		key, err := url.QueryUnescape(k)
		if err != nil || (key != "limit" && key != "status" && key != "cursor") {
			continue
		}
		if seen[key] {
			return q, false
		}
		seen[key] = true
		value, err := url.QueryUnescape(v)
		if err != nil {
			return q, false
		}
		switch key {
		case "limit":
			if value == "" || len(value) > 18 || strings.Trim(value, "0123456789") != "" {
				return q, false
			}
			n, err := strconv.Atoi(value)
			if err != nil || n < 1 || n > petstore.MaxPageSize {
				return q, false
			}
			q.limit = n
		case "status":
			q.status = petstore.Status(value)
			if !q.status.Valid() {
				return q, false
			}
		case "cursor":
			n, err := strconv.ParseInt(value, 36, 64)
			if err != nil || n < 1 || strconv.FormatInt(n, 36) != value {
				return q, false
			}
			q.after = n
		}
	}
	return q, true
}

// FuzzListQuery sends arbitrary queries to GET /v1/pets. A query that the
// oracle accepts gets 200 with exactly the page that the store lists for it
// and a Link to the next page when one follows; any other query gets 400
// invalid_parameter. No query changes the store.
func FuzzListQuery(f *testing.F) {
	f.Add("limit=5&status=sold")
	f.Add("limit=2&cursor=a")
	f.Add("limit=1&limit=2")
	f.Fuzz(func(t *testing.T, raw string) {
		env := newEnv(t)
		before := snapshot(t, env.store)

		r := httptest.NewRequest(http.MethodGet, "/v1/pets", nil)
		r.URL.RawQuery = raw
		r.Header.Set("Authorization", "Bearer "+testKey)
		w := env.serve(r)
		code := checkResponse(t, w)
		checkUnchanged(t, env.store, before)

		q, ok := fuzzParseQuery(raw)
		if !ok {
			if w.Code != http.StatusBadRequest || code != httpapi.CodeInvalidParameter {
				t.Fatalf("query %q: status %d %s, want 400 invalid_parameter", raw, w.Code, w.Body)
			}
			return
		}
		if w.Code != http.StatusOK {
			t.Fatalf("query %q: status %d %s, want 200", raw, w.Code, w.Body)
		}
		// One pet more than the page tells whether a next page exists.
		pets, err := env.store.List(context.Background(), petstore.ListOptions{Status: q.status, Limit: q.limit + 1, After: q.after})
		if err != nil {
			t.Fatal(err)
		}
		wantLink := ""
		if len(pets) > q.limit {
			pets = pets[:q.limit]
			wantLink = "<?limit=" + strconv.Itoa(q.limit)
			if q.status != "" {
				wantLink += "&status=" + string(q.status)
			}
			wantLink += "&cursor=" + strconv.FormatInt(pets[len(pets)-1].ID, 36) + `>; rel="next"`
		}
		if got, want := w.Body.String(), marshal(t, append([]petstore.Pet{}, pets...)); got != want {
			t.Fatalf("query %q: body %s, want %s", raw, got, want)
		}
		if got := w.Header().Get("Link"); got != wantLink {
			t.Fatalf("query %q: Link = %q, want %q", raw, got, wantLink)
		}
	})
}
