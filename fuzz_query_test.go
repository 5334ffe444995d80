package petstore_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/httpapi"
)

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
