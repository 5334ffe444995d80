package petstore_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/docspage"
	"github.com/petstore-go/petstore/httpapi"
	"github.com/petstore-go/petstore/internal/wire"
	"github.com/petstore-go/petstore/memstore"
)

// authReader is an Authenticator for the 403 and 503 answers: key "reader"
// may only read, key "down" finds the backend down.
func authReader(ctx context.Context, op petstore.Operation, token string) (context.Context, error) {
	switch {
	case token == "down":
		return nil, errors.New("key server unreachable")
	case token == "reader" && op == petstore.OpCreatePet:
		return nil, petstore.ErrForbidden
	case token == "reader":
		return ctx, nil
	}
	return nil, petstore.ErrUnauthorized
}

// A wireCase is a request to a handler on a seededStore and the answer it
// must get.
type wireCase struct {
	name                 string
	opts                 []petstore.Option
	method, target, body string
	header               http.Header
	status               int
	code                 httpapi.Code
	message              string               // the exact message of an error, when not ""
	errors               []httpapi.FieldError // the exact problems of an error, when not nil; the message joins their details
	want                 map[string]string    // headers with exactly this value, or none for ""
	answer               string               // the exact body, when not ""
}

// TestWire sends the real handler, in process, the requests that
// petstoretest.TestServer, which checks the wire rules over a real
// connection (TestConformanceServer), does not send: those that net/http's
// client or a proxy would refuse, those outside the base path or that a
// host's router may clean or redirect (the handler matches paths exactly),
// those whose exact answer depends on the pets that the store holds, on the
// form of the cursor or on the options, and the answers of an
// Authenticator. It checks the answer and that the store is unchanged.
func TestWire(t *testing.T) {
	seeded := snapshot(t, seededStore(t))
	page := func(from, to int) string { return marshal(t, seeded[from-1:to]) }
	invalid := map[string]string{"Www-Authenticate": `Bearer realm="petstore", error="invalid_token"`, "Connection": "close"}
	noKey := http.Header{"Authorization": nil}
	reader := petstore.WithAuthenticator(petstore.AuthenticatorFunc(authReader))
	readerKey := http.Header{"Authorization": {"Bearer reader"}}
	team := []petstore.Option{petstore.WithCredential(teamToken), petstore.WithOpenAPI(false)}
	teamChallenge := map[string]string{"Www-Authenticate": teamToken.Challenge}
	statuses := statusList()
	cases := []wireCase{
		{name: "token with a header injection", target: "/v1/pets", header: http.Header{"Authorization": {"Bearer " + testKey + "\r\nX-Admin: 1"}}, status: 401, code: "unauthorized", want: invalid},
		{name: "1 MiB token", target: "/v1/pets", header: http.Header{"Authorization": {"Bearer " + strings.Repeat("k", 1<<20)}}, status: 401, code: "unauthorized", want: invalid},
		{name: "100k-character path", target: "/v1/" + strings.Repeat("a", 100_000), status: 404, code: "not_found"},
		{name: "petId of 100k digits", target: "/v1/pets/" + strings.Repeat("9", 100_000), status: 400, code: "invalid_parameter"},
		{name: "other version", target: "/v2/pets", status: 404, code: "not_found"},
		{name: "double slash before pets", target: "/v1//pets", status: 404, code: "not_found"},
		{name: "double slash before a petId", target: "/v1/pets//1", status: 404, code: "not_found"},
		{name: "dot-dot segment", target: "/v1/pets/../pets", status: 404, code: "not_found"},
		{name: "encoded slash after pets", target: "/v1/pets%2F1", status: 404, code: "not_found"},
		{name: "petId dot-dot", target: "/v1/pets/..", status: 400, code: "invalid_parameter"},
		{name: "petId an encoded slash", target: "/v1/pets/%2F", status: 400, code: "invalid_parameter"},
		{name: "petId with an encoded slash", target: "/v1/pets/1%2F2", status: 400, code: "invalid_parameter"},
		{name: "no base path", target: "/pets", status: 404, code: "not_found"},
		{name: "petId percent-encoded", target: "/v1/pets/%31", status: 200, answer: marshal(t, seeded[0])},
		{name: "default page", target: "/v1/pets", status: 200, want: map[string]string{"Link": `<?limit=20&cursor=k>; rel="next"`}, answer: page(1, 20)},
		{name: "limit 2 after a cursor", target: "/v1/pets?limit=2&cursor=2", status: 200, want: map[string]string{"Link": `<?limit=2&cursor=4>; rel="next"`}, answer: page(3, 4)},
		{name: "by status with limit", target: "/v1/pets?status=sold&limit=1", status: 200, want: map[string]string{"Link": `<?limit=1&status=sold&cursor=3>; rel="next"`}, answer: page(3, 3)},
		{name: "limit equal to what is left", target: "/v1/pets?limit=4&cursor=q", status: 200, want: map[string]string{"Link": ""}, answer: page(27, 30)},
		{name: "cursor at the end", target: "/v1/pets?cursor=u", status: 200, want: map[string]string{"Link": ""}, answer: "[]\n"},
		{name: "cursor past the end", target: "/v1/pets?cursor=zzzzzz", status: 200, want: map[string]string{"Link": ""}, answer: "[]\n"},
		{name: "cursor that is a word past the end", target: "/v1/pets?cursor=garbage", status: 200, want: map[string]string{"Link": ""}, answer: "[]\n"},

		// The message of a 401 names the scheme that was sent.
		{name: "no key", target: "/v1/pets", header: noKey, status: 401, code: "unauthorized",
			message: "an API key is required; send it in the header Authorization: Bearer KEY", want: map[string]string{"Www-Authenticate": `Bearer realm="petstore"`, "Connection": "close"}},
		{name: "Basic scheme", target: "/v1/pets", header: http.Header{"Authorization": {"Basic cHJvYmxlbXM6a2V5"}}, status: 401, code: "unauthorized",
			message: "the Authorization header uses Basic; an API key is required; send it in the header Authorization: Bearer KEY"},
		{name: "no scheme", target: "/v1/pets", header: http.Header{"Authorization": {testKey}}, status: 401, code: "unauthorized",
			message: "the Authorization header uses another scheme; an API key is required; send it in the header Authorization: Bearer KEY"},

		// A host that reads the credential from a header of its own
		// authenticates by it, ignores Authorization, and answers a missing or
		// rejected credential with its own challenge and messages.
		{name: "team token", opts: team, target: "/v1/pets", header: http.Header{"Authorization": nil, "X-Team-Token": {testKey}}, status: 200},
		{name: "no team token", opts: team, target: "/v1/pets", header: noKey, status: 401, code: "unauthorized", message: teamToken.Missing, want: teamChallenge},
		{name: "empty team token", opts: team, target: "/v1/pets", header: http.Header{"Authorization": nil, "X-Team-Token": {""}}, status: 401, code: "unauthorized",
			message: teamToken.Missing, want: teamChallenge},
		{name: "bearer token instead of a team token", opts: team, target: "/v1/pets", status: 401, code: "unauthorized", message: teamToken.Missing, want: teamChallenge},
		{name: "wrong team token", opts: team, target: "/v1/pets", header: http.Header{"Authorization": nil, "X-Team-Token": {"wrong"}}, status: 401, code: "unauthorized",
			message: teamToken.Rejected, want: teamChallenge},
		{name: "team token that no bearer could carry", opts: team, target: "/v1/pets", header: http.Header{"Authorization": nil, "X-Team-Token": {"wrong token"}}, status: 401,
			code: "unauthorized", message: teamToken.Rejected, want: teamChallenge},

		// The handler asks the Authenticator about the request's operation,
		// and answers what it says.
		{name: "read-only key lists", opts: []petstore.Option{reader}, target: "/v1/pets", header: readerKey, status: 200, want: map[string]string{"Connection": ""}},
		{name: "read-only key gets", opts: []petstore.Option{reader}, target: "/v1/pets/1", header: readerKey, status: 200},
		{name: "read-only key may not create", opts: []petstore.Option{reader}, method: "POST", target: "/v1/pets", body: `{"name":"A","categoryId":1}`, header: readerKey, status: 403, code: "forbidden"},
		{name: "authenticator down", opts: []petstore.Option{reader}, target: "/v1/pets", header: http.Header{"Authorization": {"Bearer down"}}, status: 503, code: "unavailable", want: map[string]string{"Retry-After": "1"}},
		{name: "authenticator rejects", opts: []petstore.Option{reader}, target: "/v1/pets", header: http.Header{"Authorization": {"Bearer other"}}, status: 401, code: "unauthorized", want: invalid},
		{name: "authenticator, no key", opts: []petstore.Option{reader}, target: "/v1/pets", header: noKey, status: 401, code: "unauthorized",
			want: map[string]string{"Www-Authenticate": `Bearer realm="petstore"`, "Connection": "close"}},

		// A message that names a path names it under the base path, as a
		// client must send it.
		{name: "pet not found", target: "/v1/pets/99", status: 404, code: "not_found", message: "no pet has ID 99; list pets with GET /v1/pets"},
		{name: "pet not found under another base path", opts: []petstore.Option{petstore.WithBasePath("/api/v2")}, target: "/api/v2/pets/99", status: 404, code: "not_found",
			message: "no pet has ID 99; list pets with GET /api/v2/pets"},
		{name: "pet not found under no base path", opts: []petstore.Option{petstore.WithBasePath("")}, target: "/pets/99", status: 404, code: "not_found",
			message: "no pet has ID 99; list pets with GET /pets"},
		{name: "unknown path under another base path", opts: []petstore.Option{petstore.WithBasePath("/api/v2")}, target: "/api/v2/orders", status: 404, code: "not_found",
			message: "no such path; the API serves /api/v2/pets and /api/v2/pets/{petId}"},

		// A message that names a limit or the statuses takes them from the
		// Go constants, so that changing one changes what clients are told.
		{name: "limit too large", target: "/v1/pets?limit=" + strconv.Itoa(petstore.MaxPageSize+1), status: 400, code: "invalid_parameter",
			message: "limit must be an integer from 1 to " + strconv.Itoa(petstore.MaxPageSize)},
		{name: "unknown status in the query", target: "/v1/pets?status=lost", status: 400, code: "invalid_parameter", message: "status must be " + statuses},
		{name: "unknown status in the body", method: "POST", target: "/v1/pets", body: `{"name":"Rex","categoryId":1,"status":"lost"}`, status: 400, code: "invalid_body",
			message: "status must be " + statuses + "; omit it for none"},
		{name: "status of another type", method: "POST", target: "/v1/pets", body: `{"name":"Rex","categoryId":1,"status":1}`, status: 400, code: "invalid_body",
			message: "status must be " + statuses + ": expected a string"},
		{name: "name too long", method: "POST", target: "/v1/pets", body: `{"name":"` + strings.Repeat("a", petstore.MaxNameLength+1) + `","categoryId":1}`, status: 400, code: "invalid_body",
			message: "name is longer than " + strconv.Itoa(petstore.MaxNameLength) + " characters; shorten it"},
		{name: "Idempotency-Key too long", method: "POST", target: "/v1/pets", body: `{"name":"Rex","categoryId":1}`, status: 400, code: "invalid_parameter",
			header:  http.Header{"Idempotency-Key": {strings.Repeat("k", petstore.MaxIdempotencyKeyLength+1)}},
			message: "Idempotency-Key must be 1 to " + strconv.Itoa(petstore.MaxIdempotencyKeyLength) + " characters long"},

		{name: "a method of 4,000 bytes", method: strings.Repeat("G", 4000), target: "/v1/pets", status: 405, code: "method_not_allowed",
			message: "method " + longMethodCut + " is not allowed here; use one of " + wire.Allow("/pets")},

		// The OpenAPI document is served, without authentication, at its
		// exact path and for GET and HEAD only.
		{name: "the document for POST", method: "POST", target: "/v1/openapi.json", header: noKey, status: 405, code: "method_not_allowed", want: map[string]string{"Allow": wire.Allow(wire.OpenAPIPath), "Www-Authenticate": ""}},
	}
	for _, method := range []string{http.MethodPut, http.MethodDelete, http.MethodPatch, http.MethodOptions} {
		cases = append(cases, wireCase{name: "the document for " + method, method: method, target: "/v1/openapi.json", header: noKey, status: 405, code: "method_not_allowed",
			want: map[string]string{"Allow": wire.Allow(wire.OpenAPIPath), "Www-Authenticate": ""}})
	}
	for _, target := range []string{"/openapi.json", "/v1/openapi.json/", "/v1/pets/openapi.json", "/v1/openapi.jsonx", "/v1/OpenAPI.json", "/v1/openapi%2Ejson"} {
		cases = append(cases, wireCase{name: "a neighbour of the document " + target, target: target, header: noKey, status: 401, code: "unauthorized"})
	}
	// The cursor of a page's Link is AppendCursor of its last pet, and gets
	// the pets after that one.
	for _, n := range []int{1, 2, 7} {
		cursor := string(wire.AppendCursor(nil, seeded[n-1].ID))
		cases = append(cases,
			wireCase{name: "the Link of a page of " + strconv.Itoa(n), target: "/v1/pets?limit=" + strconv.Itoa(n), status: 200,
				want: map[string]string{"Link": "<?limit=" + strconv.Itoa(n) + "&cursor=" + cursor + `>; rel="next"`}},
			wireCase{name: "the pets after pet " + strconv.Itoa(n), target: "/v1/pets?limit=100&cursor=" + cursor, status: 200, answer: marshal(t, seeded[n:])})
	}
	// A client that asks for JSON, or for a stream with q=0, gets a page.
	for _, accept := range []string{"application/json", "*/*", "text/event-stream;q=0", "text/event-stream; q=0.0"} {
		cases = append(cases, wireCase{name: "Accept: " + accept, target: "/v1/pets?limit=2", header: http.Header{"Accept": {accept}}, status: 200, answer: page(1, 2)})
	}
	// A document or docs page that is off is a path like any unknown one:
	// 401 without a key, 404 with one.
	for _, off := range []struct {
		name    string
		opts    []petstore.Option
		targets []string
	}{
		{"WithOpenAPI(false)", []petstore.Option{petstore.WithOpenAPI(false)}, []string{"/v1/openapi.json"}},
		{"no docs", nil, []string{"/v1/docs", "/v1/docs/init.js"}},
		{"WithDocs(nil)", []petstore.Option{petstore.WithDocs(nil)}, []string{"/v1/docs", "/v1/docs/init.js"}},
		{"WithDocs(nil) after a page", []petstore.Option{petstore.WithDocs(docspage.Files()), petstore.WithDocs(nil)}, []string{"/v1/docs", "/v1/docs/init.js"}},
	} {
		for _, target := range off.targets {
			cases = append(cases,
				wireCase{name: off.name + " " + target + " without a key", opts: off.opts, target: target, header: noKey, status: 401, code: "unauthorized"},
				wireCase{name: off.name + " " + target, opts: off.opts, target: target, status: 404, code: "not_found"})
		}
	}
	// Every answer of getPet, and only of getPet, carries the deprecation
	// headers, with the default dates or WithDeprecation's. (The
	// conformance clause get-deprecation checks their form and the successor
	// link over the wire.)
	dep, sunset := defaultDates()
	for _, d := range []struct {
		name                string
		opts                []petstore.Option
		deprecation, sunset string
	}{
		{"default dates", nil, "@1767225600", "Thu, 05 Dec 2030 00:00:00 GMT"},
		{"WithDeprecation", []petstore.Option{petstore.WithDeprecation(dep.AddDate(1, 0, 0), sunset.AddDate(1, 0, 0))}, "@1798761600", "Fri, 05 Dec 2031 00:00:00 GMT"},
	} {
		headers := map[string]string{"Deprecation": d.deprecation, "Sunset": d.sunset, "Link": `<../pets>; rel="successor-version"`}
		cases = append(cases,
			wireCase{name: "getPet, " + d.name, opts: d.opts, target: "/v1/pets/1", status: 200, want: headers},
			wireCase{name: "getPet of no pet, " + d.name, opts: d.opts, target: "/v1/pets/99", status: 404, code: "not_found", want: headers},
			wireCase{name: "getPet of a bad petId, " + d.name, opts: d.opts, target: "/v1/pets/x", status: 400, code: "invalid_parameter", want: headers},
			wireCase{name: "listPets, " + d.name, opts: d.opts, target: "/v1/pets?limit=1", status: 200, want: map[string]string{"Deprecation": "", "Sunset": ""}},
			wireCase{name: "no path, " + d.name, opts: d.opts, target: "/v1/nothing", status: 404, code: "not_found", want: map[string]string{"Deprecation": "", "Sunset": ""}})
	}
	runWire(t, cases)
}

// runWire runs each case in a subtest of its name on a handler of its own.
func runWire(t *testing.T, cases []wireCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			env := newEnv(t, tt.opts...)
			before := snapshot(t, env.store)
			w := env.serve(newRequest(t, tt.method, tt.target, tt.body, tt.header))
			if code := checkResponse(t, w); w.Code != tt.status || code != tt.code {
				t.Errorf("status %d %q, want %d %q; body %.300s", w.Code, code, tt.status, tt.code, w.Body)
			}
			if tt.message != "" || tt.errors != nil {
				got, want := decode[httpapi.Error](t, w), tt.message
				for _, f := range tt.errors {
					want = strings.TrimPrefix(want+"; "+f.Detail, "; ")
				}
				if got.Message != want {
					t.Errorf("message %q, want %q", got.Message, want)
				}
				if diff := cmp.Diff(tt.errors, got.Errors, cmpopts.EquateEmpty()); tt.errors != nil && diff != "" {
					t.Errorf("errors (-want +got):\n%s", diff)
				}
			}
			for k, v := range tt.want {
				if got := w.Header().Values(k); v == "" && len(got) > 0 || v != "" && !slices.Equal(got, []string{v}) {
					t.Errorf("header %s = %q, want %q", k, got, v)
				}
			}
			if tt.answer != "" && w.Body.String() != tt.answer {
				t.Errorf("body %s, want %s", w.Body, tt.answer)
			}
			checkUnchanged(t, env.store, before)
		})
	}
}

// TestAppendCursor checks that AppendCursor appends to its buffer; TestWire
// checks the cursors it makes against the handler's.
func TestAppendCursor(t *testing.T) {
	if got, want := string(wire.AppendCursor([]byte("x="), 36)), "x="+string(wire.AppendCursor(nil, 36)); got != want {
		t.Errorf("AppendCursor(x=, 36) = %q, want %q", got, want)
	}
}

// conditionalGet GETs target from srv with the test key and, when tag is
// not empty, If-None-Match: tag. It returns the status, the ETag,
// Cache-Control and Link headers and the body.
func conditionalGet(t *testing.T, srv *httptest.Server, target, tag string) (status int, etag, cacheControl, link, body string) {
	t.Helper()
	header := http.Header{"Authorization": {"Bearer " + testKey}}
	if tag != "" {
		header.Set("If-None-Match", tag)
	}
	resp, body := fetch(t, srv, srv.URL+target, header)
	return resp.StatusCode, resp.Header.Get("ETag"), resp.Header.Get("Cache-Control"), resp.Header.Get("Link"), body
}

// addPets adds n pets to store.
func addPets(t *testing.T, store petstore.Store, n int) {
	t.Helper()
	for range n {
		mustAdd(t, store, petstore.NewPet{Name: "p", CategoryID: 1})
	}
}

// TestConditionalLastFullPageGrows checks a full page that no page follows
// yet: it must be revalidated, it answers 304 while no pet is added, and
// once one is, the same tag gets the page again with its new Link and a
// new tag, now final.
func TestConditionalLastFullPageGrows(t *testing.T) {
	store := memstore.New()
	addPets(t, store, 3)
	srv := newServer(t, newHandler(t, store))
	const target = "/v1/pets?limit=3"

	status, tag, cc, link, body := conditionalGet(t, srv, target, "")
	if status != 200 || tag == "" || cc != "private, no-cache" || link != "" {
		t.Fatalf("the full last page: %d, ETag %q, Cache-Control %q, Link %q", status, tag, cc, link)
	}
	if status, _, _, _, _ := conditionalGet(t, srv, target, tag); status != 304 {
		t.Errorf("the full last page with its tag = %d, want 304", status)
	}

	addPets(t, store, 1)
	status, grown, cc, link, grownBody := conditionalGet(t, srv, target, tag)
	if status != 200 || link == "" || grown == tag || cc != "private, max-age=3600" || grownBody != body {
		t.Errorf("after a pet was added, the old tag got %d, ETag %q (old %q), Cache-Control %q, Link %q; want 200 with a Link, a new tag and a final Cache-Control",
			status, grown, tag, cc, link)
	}
	if status, _, _, _, _ := conditionalGet(t, srv, target, grown); status != 304 {
		t.Errorf("the page with its new tag = %d, want 304", status)
	}
}

// TestConditionalGrowingPage checks that a page with fewer than limit pets
// has no ETag, may not be stored, and is never answered 304, whatever the
// client sends, also after it has grown.
func TestConditionalGrowingPage(t *testing.T) {
	store := memstore.New()
	addPets(t, store, 2)
	srv := newServer(t, newHandler(t, store))
	const target = "/v1/pets?limit=4"
	_, fullTag, _, _, _ := conditionalGet(t, srv, "/v1/pets?limit=2", "")
	for i, inm := range []string{"", "*", fullTag, `W/"0000000000000000"`} {
		if i > 0 {
			addPets(t, store, 1) // the page grows: 3, then 4 pets, then 5 (still 4 on the page)
		}
		status, tag, cc, _, body := conditionalGet(t, srv, target, inm)
		pets := 2 + i
		if pets >= 4 {
			// Full now: final, with a tag that no earlier answer had.
			if status != 200 || tag == "" || tag == fullTag || body == "" {
				t.Errorf("full page with If-None-Match %q: %d, ETag %q", inm, status, tag)
			}
			continue
		}
		if status != 200 || tag != "" || cc != "no-store" || body == "" {
			t.Errorf("page of %d pets with If-None-Match %q: %d, ETag %q, Cache-Control %q, body %q; want 200, no tag, no-store",
				pets, inm, status, tag, cc, body)
		}
	}
}

// TestReportsEveryProblem: a create's body and a list's query are answered
// with every problem they have, up to 16, each under its pointer or
// parameter, and a body that is not an object with one problem.
func TestReportsEveryProblem(t *testing.T) {
	blank := httpapi.FieldError{Pointer: "/name", Detail: "name must not be blank"}
	category := httpapi.FieldError{Pointer: "/categoryId", Detail: "categoryId must be 1 or greater"}
	status := httpapi.FieldError{Pointer: "/status", Detail: `status must be "available", "pending" or "sold"; omit it for none`}
	id := httpapi.FieldError{Pointer: "/id", Detail: "id is assigned by the store; remove it from the body"}
	limit := httpapi.FieldError{Parameter: "limit", Detail: "limit must be an integer from 1 to 100"}
	statusParam := httpapi.FieldError{Parameter: "status", Detail: `status must be "available", "pending" or "sold"`}
	cursor := httpapi.FieldError{Parameter: "cursor", Detail: "cursor is not valid; follow the Link header of the previous page"}
	create := func(name, body string, errors ...httpapi.FieldError) wireCase {
		return wireCase{name: name, method: http.MethodPost, target: "/v1/pets", body: body, status: 400, code: "invalid_body", errors: errors}
	}
	query := func(name, query string, errors ...httpapi.FieldError) wireCase {
		return wireCase{name: name, target: "/v1/pets" + query, status: 400, code: "invalid_parameter", errors: errors}
	}
	notAnObject := func(name, body, message string) wireCase {
		return wireCase{name: name, method: http.MethodPost, target: "/v1/pets", body: body, status: 400, code: "invalid_body",
			message: "the body is not valid: " + message, errors: []httpapi.FieldError{}}
	}
	nameRequired := httpapi.FieldError{Pointer: "/name", Detail: "name is required"}
	categoryRequired := httpapi.FieldError{Pointer: "/categoryId", Detail: "categoryId is required"}
	unknown := func(name, pointer string) httpapi.FieldError {
		return httpapi.FieldError{Pointer: pointer, Detail: `unknown member "` + name + `"; a pet has name, categoryId and status`}
	}
	var many strings.Builder // a body of 100 unknown members, of which the first 16 are answered
	many.WriteString(`{"name":"Rex","categoryId":1`)
	var first16 []httpapi.FieldError
	for i := range 100 {
		m := "m" + strings.Repeat("x", i)
		many.WriteString(`,"` + m + `":1`)
		if i < 16 {
			first16 = append(first16, unknown(m, "/"+m))
		}
	}
	many.WriteString(`}`)
	runWire(t, []wireCase{
		create("name blank", `{"name":" ","categoryId":1}`, blank),
		create("name too long", `{"name":"`+strings.Repeat("a", petstore.MaxNameLength+1)+`","categoryId":1}`,
			httpapi.FieldError{Pointer: "/name", Detail: "name is longer than 256 characters; shorten it"}),
		create("name control", `{"name":"a\u0007","categoryId":1}`, httpapi.FieldError{Pointer: "/name", Detail: "name must not contain control characters"}),
		create("name wrong type", `{"name":["Rex"],"categoryId":1}`, httpapi.FieldError{Pointer: "/name", Detail: "name must be a string: expected a string"}),
		create("name null", `{"name":null,"categoryId":1}`, httpapi.FieldError{Pointer: "/name", Detail: "name is null; it must be a string"}),
		create("name missing", `{"categoryId":1}`, nameRequired),
		create("categoryId zero", `{"name":"Rex","categoryId":0}`, category),
		create("categoryId fraction", `{"name":"Rex","categoryId":1.5}`,
			httpapi.FieldError{Pointer: "/categoryId", Detail: "categoryId must be an integer: expected an integer without fraction or exponent"}),
		create("categoryId missing", `{"name":"Rex"}`, categoryRequired),
		create("status", `{"name":"Rex","categoryId":1,"status":"lost"}`, status),
		create("id", `{"id":7,"name":"Rex","categoryId":1}`, id),
		create("unknown", `{"name":"Rex","categoryId":1,"colour":{"a":[1,2]},"a/b~c":true}`, unknown("colour", "/colour"), unknown("a/b~c", "/a~1b~0c")),
		create("name twice", `{"name":"Rex","name":"Max","categoryId":1}`, httpapi.FieldError{Pointer: "/name", Detail: "name is given more than once; give it once"}),
		// Every field wrong at once, in another order than the answer's.
		create("all", `{"colour":"red","status":"lost","id":7,"categoryId":0,"name":""}`, blank, category, status, id, unknown("colour", "/colour")),
		create("all missing", `{}`, nameRequired, categoryRequired),
		create("100 problems", many.String(), first16...),
		query("limit", "?limit=0", limit),
		query("status param", "?status=lost", statusParam),
		query("cursor", "?cursor=!", cursor),
		query("every parameter", "?cursor=!&status=lost&limit=x", limit, statusParam, cursor),
		query("limit twice", "?limit=5&limit=6&status=sold", httpapi.FieldError{Parameter: "limit", Detail: "limit is given more than once; give it once"}),
		// A body that is not an object is one problem.
		notAnObject("an array", `[]`, "expected a JSON object at byte offset 0"),
		notAnObject("cut short", `{"name":"Rex",`, "expected a member name in double quotes at byte offset 14"),
		notAnObject("more after the object", `{"name":"Rex","categoryId":1}x`, "unexpected data after the JSON object at byte offset 29"),
		notAnObject("a leading zero", `{"name":"Rex","categoryId":01}`, "categoryId must be an integer: leading zero in a number at byte offset 27"),
	})
}

// TestProblemJSONWhenAskedFor: an error goes as application/problem+json to
// a client that prefers it, with the body that application/json has.
func TestProblemJSONWhenAskedFor(t *testing.T) {
	env := newEnv(t)
	before := snapshot(t, env.store)
	for _, accept := range []string{"", "application/json", "*/*", "application/problem+json", "application/json;q=0.5, application/problem+json"} {
		header, want := http.Header{"Accept": {accept}}, "application/json"
		if accept == "" {
			header = nil
		} else if strings.HasSuffix(accept, "problem+json") {
			want = "application/problem+json"
		}
		for _, target := range []string{"/v1/pets/99", "/v1/pets?limit=0"} {
			plain := env.serve(newRequest(t, http.MethodGet, target, "", nil))
			checkResponse(t, plain)
			w := env.serve(newRequest(t, http.MethodGet, target, "", header))
			if got := w.Header().Get("Content-Type"); got != want || w.Body.String() != plain.Body.String() {
				t.Errorf("Accept %q, %s: %s %s, want %s %s", accept, target, got, w.Body, want, plain.Body)
			}
		}
	}
	checkUnchanged(t, env.store, before)
}
