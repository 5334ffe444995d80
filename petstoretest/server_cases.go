package petstoretest

import (
	"bytes"
	"cmp"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/internal/wire"
)

// Rules that helpers shared by several subtests check.
const (
	clauseCreate = "POST /pets answers 201 Created with the pet as stored, with a positive id, and a Location that resolves to the new pet; a pet created without a status has no status member."
	clauseList   = "GET /pets answers 200 with a JSON array of pets ascending by id, at most limit of them (20 by default), and a next Link, resolved against the request's URL, to the rest of the list."
)

// The challenges of a 401: for a request without a usable credential, and
// for one whose token the server does not accept.
var (
	challengeMissing = map[string]string{"WWW-Authenticate": `Bearer realm="petstore"`}
	challengeInvalid = map[string]string{"WWW-Authenticate": `Bearer realm="petstore", error="invalid_token"`}
)

// serverCases is the API as a client sees it, one rule per case.
var serverCases = []clause[*serverT]{
	// Authentication.
	{name: "auth-missing", sentence: `A request without exactly one Authorization header is answered 401 unauthorized with WWW-Authenticate: Bearer realm="petstore" and no error.`, test: sends(func(st *serverT) []request {
		return append(st.onEachOperation(nil, challengeMissing),
			st.onEachOperation([]string{"Bearer " + st.e.APIKey, "Bearer " + st.e.APIKey}, challengeMissing)...)
	})},
	{name: "auth-wrong-scheme", sentence: `A credential in a scheme other than Bearer, or not parted from it by spaces, is answered 401 unauthorized with WWW-Authenticate: Bearer realm="petstore" and no error.`, test: sends(func(st *serverT) []request {
		return each([]string{"Basic " + st.e.APIKey, "Basic ZnV6ejpmdXp6", "Token " + st.e.APIKey, "Bearer" + st.e.APIKey, "Bearer\t" + st.e.APIKey,
			`Digest username="petstoretest"`}, func(auth string) []request {
			return st.onEachOperation([]string{auth}, challengeMissing)
		})
	})},
	{name: "auth-empty-token", sentence: `An empty Authorization header, or Bearer with an empty token, is answered 401 unauthorized with WWW-Authenticate: Bearer realm="petstore" and no error.`, test: sends(func(st *serverT) []request {
		return each([]string{"", "Bearer", "Bearer ", "Bearer    ", "bearer"}, func(auth string) []request {
			return st.onEachOperation([]string{auth}, challengeMissing)
		})
	})},
	{name: "auth-bad-token", sentence: `A token that the server rejects is answered 401 unauthorized with WWW-Authenticate: Bearer realm="petstore", error="invalid_token", and the body does not repeat the token.`, test: sends(func(st *serverT) []request {
		tokens := []string{"petstoretest-" + rand.Text(), st.e.APIKey + "x", "a,b", "a b", "not a token!"}
		if len(st.e.APIKey) > 1 {
			tokens = append(tokens, st.e.APIKey[:len(st.e.APIKey)-1])
		}
		return each(tokens, func(token string) []request {
			return st.onEachOperation([]string{"Bearer " + token}, challengeInvalid)
		})
	})},
	{name: "auth-scheme-case", sentence: "The scheme Bearer is matched without regard to case, and may be followed by several spaces: bearer and BEARER work as Bearer does.", test: sends(func(st *serverT) []request {
		return each([]string{"Bearer ", "bearer ", "BEARER ", "bEaReR   ", "bearer  "}, func(scheme string) []request {
			return []request{{path: "/pets?limit=1", header: http.Header{"Authorization": {scheme + st.e.APIKey}}, status: 200, want: map[string]string{}}}
		})
	})},
	{name: "auth-before-routing", sentence: "A request without a valid key is answered 401 also on unknown paths and with other methods, so that it learns nothing about the routes.", test: sends(func(st *serverT) []request {
		return each([]struct{ method, path string }{{http.MethodGet, "/no-such-path"}, {http.MethodGet, "/store/orders"}, {http.MethodGet, "/pets/"},
			{http.MethodDelete, "/orders"}, {http.MethodDelete, "/pets"}, {http.MethodPut, "/pets/1"}, {http.MethodDelete, "/pets/1"},
		}, func(tc struct{ method, path string }) []request {
			return []request{{method: tc.method, path: tc.path, header: http.Header{"Authorization": nil}, status: 401, code: "unauthorized", want: challengeMissing},
				{method: tc.method, path: tc.path, header: http.Header{"Authorization": {"Bearer petstoretest-" + rand.Text()}}, status: 401, code: "unauthorized", want: challengeInvalid}}
		})
	})},

	// Validation.
	{name: "list-invalid-limit", sentence: "GET /pets with a limit that is not an integer, is below 1 or above 100, or is given twice is answered 400 invalid_parameter.", test: answered(400, "invalid_parameter", "/pets?",
		"limit=0", "limit=101", "limit=-1", "limit=1000000000000000000000", "limit=abc", "limit=1.5", "limit=1e1",
		"limit=0x10", "limit=", "limit=%20", "limit=%31%30%31", "limit=%zz", "limit=1&limit=2", "limit=1&limit=1", "limit=5;status=sold",
	)},
	{name: "list-invalid-status", sentence: "GET /pets with a status other than available, pending and sold, or given twice, is answered 400 invalid_parameter.", test: answered(400, "invalid_parameter", "/pets?",
		"status=unknown", "status=AVAILABLE", "status=Available", "status=", "status=available,sold",
		"status=%20available", "status=sold&status=sold", "status=sold&limit=1&status=lost",
	)},
	{name: "list-invalid-cursor", sentence: "GET /pets with a malformed cursor, or two, is answered 400 invalid_parameter.", test: answered(400, "invalid_parameter", "/pets?",
		"cursor=%2A%2A%2A", "cursor=!!", "cursor=a%20b", "cursor=%ZZ", "cursor=%%%", "limit=5&cursor=%3C%3E", "cursor=",
		"cursor=01", "cursor=0", "cursor=-1", "cursor=zzzzzzzzzzzzz", "cursor=1&cursor=2",
	)},
	{name: "list-unknown-params", sentence: "Query parameters that the API specification does not define are ignored; parameter names are matched exactly, after percent-decoding.", test: httpListUnknownParams},
	{name: "get-invalid-id", sentence: "GET /pets/{petId} with a petId that is not a base-10 int64 is answered 400 invalid_parameter.", test: answered(400, "invalid_parameter", "/pets/",
		"abc", "1.5", "1.0", "+1", "0x10", "1e3", "%201", "1%20", "%D9%A1", // an Arabic-Indic digit one
		"9223372036854775808", "-9223372036854775809", "99999999999999999999",
		"%00", "1%00", "1;x=y",
	)},
	{name: "create-invalid-body", sentence: "POST /pets with a body that is not one JSON object holding a valid name (1 to 256 characters of valid UTF-8, not blank, no control characters) and categoryId (1 or more), an optional valid status and nothing else, each once, is answered 400 invalid_body and creates no pet.", test: invalidBodies},
	{name: "create-unsupported-media-type", sentence: "POST /pets with a Content-Type other than one application/json (with or without parameters) is answered 415 unsupported_media_type with Accept-Post: application/json.", test: sends(func(st *serverT) []request {
		return each([][]string{
			nil, {"text/plain"}, {"application/xml"}, {"application/json-patch+json"}, {"application/jsonx"},
			{"application/x-www-form-urlencoded"}, {"multipart/form-data; boundary=x"}, {"application/json", "application/json"},
		}, func(ct []string) []request {
			return []request{{method: http.MethodPost, path: "/pets", body: st.validBody(), header: http.Header{"Content-Type": ct},
				status: 415, code: "unsupported_media_type", want: map[string]string{"Accept-Post": "application/json"}}}
		})
	})},
	{name: "create-too-large", sentence: "POST /pets with a body over the size limit is answered 413 payload_too_large, whether or not it declares its length; a body of exactly the limit is read.", test: httpCreateTooLarge},

	// The operations.
	{name: "create", sentence: clauseCreate, test: httpCreate},
	{name: "create-idempotent", sentence: "POST /pets sent again with the same Idempotency-Key (1 to 255 visible ASCII characters) and the same pet answers 201 with the pet created first, the same Location and Idempotent-Replayed: true, and creates nothing.", test: httpIdempotentReplay},
	{name: "create-idempotency-key-reused", sentence: "POST /pets with an Idempotency-Key used before for another pet is answered 422 idempotency_key_reused.", test: httpIdempotentReuse},
	{name: "create-idempotency-key-invalid", sentence: "POST /pets with an Idempotency-Key that is not 1 to 255 visible ASCII characters, or with two, is answered 400 invalid_parameter and creates no pet.", test: sends(func(st *serverT) []request {
		return each([][]string{{""}, {strings.Repeat("k", petstore.MaxIdempotencyKeyLength+1)}, {"a key"}, {"a\tkey"}, {"clé"}, {"a", "b"}}, func(key []string) []request {
			return []request{{method: http.MethodPost, path: "/pets", body: st.validBody(), header: http.Header{"Idempotency-Key": key},
				status: 400, code: "invalid_parameter"}}
		})
	})},
	{name: "get", sentence: "GET /pets/{petId} answers 200 with the pet as it was created.", test: httpGet},
	{name: "get-deprecation", sentence: `GET /pets/{petId} carries Deprecation: @<unix seconds>, Sunset: an HTTP date not before the deprecation, and a Link with rel="successor-version" that resolves to the list of pets.`, test: httpGetDeprecation},
	{name: "get-unknown", sentence: "GET /pets/{petId} with a well-formed petId that no pet has is answered 404 not_found.", test: answered(404, "not_found", "/pets/", "0", "-1", "9223372036854775807", "-9223372036854775808")},
	{name: "conditional", sentence: "A pet and a full page of the list carry a strong ETag, and GET or HEAD with If-None-Match naming it (also weakly, in a list, or as *) is answered 304 with the same ETag, Cache-Control and Link and no body; another tag, or a malformed one, gets the answer in full, and a 404 has no ETag.", test: httpConditional},
	{name: "list-default-limit", sentence: "GET /pets without a limit answers at most 20 pets, and exactly 20 with a next Link when more follow.", test: httpListDefaultLimit},
	{name: "list-limit", sentence: "GET /pets answers at most limit pets, and a next Link when more follow.", test: httpListLimit},
	{name: "list-pagination", sentence: `Following the Link with rel="next", resolved against the request's URL, visits every pet exactly once, in ascending order of id, with its fields as created; the last page has no next Link.`, test: httpListPagination},
	{name: "list-pagination-while-adding", sentence: "Paging through small pages visits every pet exactly once, in ascending order of id, also when pets are added between pages.", test: httpListPaginationWhileAdding},
	{name: "list-status", sentence: "GET /pets?status=S answers only pets with status S, and across its pages all of them, never a pet without a status; the next Link keeps the filter.", test: httpListStatus},

	// The protocol.
	{name: "unknown-path", sentence: "An unknown path under the base URL is answered 404 not_found, never with a redirect: paths are matched exactly, trailing slashes included.", test: sends(func(st *serverT) []request {
		reqs := gets(404, "not_found", "", "/", "/pet", "/pets/", "/pets/1/", "/pets/1/photos", "/store/orders", "/orders", "/PETS", "/pets.json")
		for _, path := range []string{"/pets/", "/pet", "/store/orders"} {
			reqs = append(reqs, request{method: http.MethodPost, path: path, body: st.validBody(), status: 404, code: "not_found"})
		}
		return append(reqs, request{method: http.MethodDelete, path: "/orders", status: 404, code: "not_found"})
	})},
	{name: "method-not-allowed", sentence: "A known path with another method is answered 405 method_not_allowed with an Allow header that lists the methods the path answers, as the route table gives them (GET, HEAD, POST on /pets), and changes nothing.", test: httpMethodNotAllowed},
	{name: "head", sentence: "HEAD answers as GET does, with the same status and headers and no body.", test: httpHead},
}

// sends returns the test that sends the requests that f makes and checks
// their answers.
func sends(f func(st *serverT) []request) func(*serverT) {
	return func(st *serverT) { st.sendAll(f(st)) }
}

// each returns the requests that f makes of each of xs, in order.
func each[X any](xs []X, f func(X) []request) []request {
	var reqs []request
	for _, x := range xs {
		reqs = append(reqs, f(x)...)
	}
	return reqs
}

// answered returns the test that sends GET prefix+suffix for each of
// suffixes, each answered with status and the error code.
func answered(status int, code, prefix string, suffixes ...string) func(*serverT) {
	return sends(func(*serverT) []request { return gets(status, code, prefix, suffixes...) })
}

// gets returns GET prefix+suffix for each of suffixes, each answered with
// status and the error code.
func gets(status int, code, prefix string, suffixes ...string) []request {
	return each(suffixes, func(s string) []request { return []request{{path: prefix + s, status: status, code: code}} })
}

// invalidBodies sends the creates whose bodies are not a valid pet, each
// with a name unique to the run when the body has a name that could be
// stored.
func invalidBodies(st *serverT) {
	name := func() string { return fmt.Sprintf("%q", st.name("invalid")) }
	withName := func(n string) string { return `{"name":"` + n + `","categoryId":1}` }
	withCategory := func(rest string) string { return `{"name":` + name() + `,"categoryId":` + rest + `}` }
	// Deep nesting within the body limit.
	deep := int(min(10_000, (st.e.MaxBodyBytes-100)/6))
	bodies := []string{
		// Documents that are not one JSON object.
		``, `null`, `[]`, `"pet"`, `{}`,
		"[" + withCategory("1") + "]", withCategory("1") + " {}", withCategory("1") + withCategory("1"), withCategory("1") + "x",
		withCategory("1") + "\x00", "\xef\xbb\xbf" + withCategory("1"), withCategory("1,"), `{"name":` + name() + `,"categoryId":1`, `{`,
		`{"name":` + name() + `,/* x */"categoryId":1}`,
		`{'name':'Rex','categoryId':1}`,
		strings.Repeat("[", deep*6),
		strings.Repeat(`{"a":`, deep) + "1" + strings.Repeat("}", deep),
		`{"name":` + strings.Repeat("[", deep*2) + `"x"` + strings.Repeat("]", deep*2) + `,"categoryId":1}`,
		// Members.
		`{"categoryId":1}`,
		`{"name":` + name() + `}`,
		`{"name":null,"categoryId":1}`,
		withCategory("null"), withCategory(`1,"status":null`), withCategory(`1,"color":"red"`),
		`{"Name":` + name() + `,"categoryId":1}`,
		`{"id":5,"name":` + name() + `,"categoryId":1}`,
		`{"name":` + name() + `,"name":` + name() + `,"categoryId":1}`,
		withCategory(`1,"name":` + name()), withCategory(`1,"categoryId":2`),
		// Numbers.
		withCategory(`"1"`), withCategory("1.0"), withCategory("1.5"), withCategory("1e2"), withCategory("1e400"), withCategory("true"),
		withCategory("99999999999999999999"), withCategory("9223372036854775808"), withCategory("-0"), withCategory("01"),
		withCategory("NaN"), withCategory("0"), withCategory("-3"),
		// Names.
		`{"name":7,"categoryId":1}`,
		withName(""), withName("   "), withName(`  \t `), withName(`\u00a0`), withName(`\u00a0 `),
		withName(strings.Repeat("a", petstore.MaxNameLength+1)),
		withName(strings.Repeat("é", petstore.MaxNameLength+1)),
		withName("R\xffex"), withName(`R\ud800ex`), withName("R\x00ex"), withName(`R\u0000ex`), withName(`R\u0007ex`),
		withName(`a\u0007`), withName(`R\u007fex`), withName(`R\u0085ex`), withName("R\nex"), withName(`R\nex`), withName("tab\there"),
		// The status member.
		withCategory(`1,"status":1`), withCategory(`1,"status":"lost"`), withCategory(`1,"status":""`), withCategory(`1,"status":"SOLD"`),
	}
	st.sendAll(each(bodies, func(b string) []request {
		return []request{{method: http.MethodPost, path: "/pets", body: b, status: 400, code: "invalid_body"}}
	}))
}

func httpMethodNotAllowed(st *serverT) {
	p := st.create(petstore.NewPet{Name: st.name("methods"), CategoryID: 1})
	pets, pet := "/pets", fmt.Sprintf("/pets/%d", p.ID)
	st.sendAll(each([]struct{ method, path, body string }{
		{http.MethodDelete, pets, ""}, {http.MethodPut, pets, st.validBody()}, {http.MethodPatch, pets, ""}, {http.MethodOptions, pets, ""},
		{http.MethodTrace, pets, ""}, {"get", pets, ""}, {http.MethodPost, pet, st.validBody()}, {http.MethodPost, pet, `{}`},
		{http.MethodPut, pet, st.validBody()}, {http.MethodPut, pet, `{}`}, {http.MethodPatch, pet, st.validBody()},
		{http.MethodDelete, pet, ""}, {http.MethodOptions, pet, ""},
	}, func(tc struct{ method, path, body string }) []request {
		allow := wire.Allow("/pets")
		if tc.path != pets {
			allow = wire.Allow("/pets/{petId}")
		}
		return []request{{method: tc.method, path: tc.path, body: tc.body, status: 405, code: "method_not_allowed", want: map[string]string{"Allow": allow}}}
	}))
	// The pet is still there, unchanged.
	st.get(p)
}

func httpHead(st *serverT) {
	p := st.create(petstore.NewPet{Name: st.name("head"), CategoryID: 1, Status: petstore.StatusPending})
	st.create(petstore.NewPet{Name: st.name("head"), CategoryID: 1})
	for _, path := range []string{"/pets?limit=1", "/pets/" + fmt.Sprint(p.ID), "/pets/0", "/pets/x", "/pets?limit=0", "/pets/1/photos"} {
		get := st.send(http.MethodGet, st.url(path), nil, nil)
		head := st.send(http.MethodHead, st.url(path), nil, nil)
		diff(st, fmt.Sprintf("HEAD %s: status as GET's", st.url(path)), get.resp.StatusCode, head.resp.StatusCode)
		for _, h := range []string{"Content-Type", "Cache-Control", "X-Content-Type-Options", "Link", "Deprecation", "Sunset",
			"WWW-Authenticate", "Allow", "ETag", "Vary"} {
			diff(st, fmt.Sprintf("HEAD %s: header %s as GET's", st.url(path), h), get.resp.Header.Values(h), head.resp.Header.Values(h))
		}
		if len(head.body) > 0 {
			st.Errorf("HEAD %s: a body of %d bytes", st.url(path), len(head.body))
		}
	}
}

func httpListUnknownParams(st *serverT) {
	st.createEach(1)
	// The limit applies, and the other parameters are ignored; %6C is l.
	for _, q := range []string{"limit=1&foo=bar", "page=3&limit=1&offset=2", "limit=1&sort=desc&Status=lost&LIMIT=0", "%6Cimit=1"} {
		st.wantPage(q, 1, false)
	}
	for _, q := range []string{"foo=bar", "%zz=1", "Limit=0"} {
		st.wantPage(q, 0, false)
	}
}

// wantPage gets /pets?query and reports a violation when the page does not
// have n pets (any number when n is 0) or, when more is true, has no next
// Link. It returns the page and its next Link, resolved.
func (st *serverT) wantPage(query string, n int, more bool) (*exchange, *url.URL) {
	x := st.send(http.MethodGet, st.url("/pets?"+query), nil, nil)
	pets, ok := st.wantPets(x)
	if !ok {
		return x, nil
	}
	if n > 0 && len(pets) != n {
		st.Errorf("%s: %d pets, want %d", x, len(pets), n)
	}
	next := st.linkRel(x, "next")
	if more && next == nil {
		st.Errorf("%s: no next Link, though more pets follow: Link %q", x, x.resp.Header.Values("Link"))
	}
	return x, next
}

func httpCreateTooLarge(st *serverT) {
	limit := st.e.MaxBodyBytes
	// A valid pet padded with spaces to limit bytes, then to one more.
	pet := petBody(petstore.NewPet{Name: st.name("at the size limit"), CategoryID: 1})
	if pad := limit - int64(len(pet)); pad >= 0 {
		body := append(pet, bytes.Repeat([]byte(" "), int(pad))...)
		x := st.send(http.MethodPost, st.url("/pets"), body, nil)
		if !st.wantStatus(x, http.StatusCreated) {
			st.Errorf("a body of exactly Endpoint.MaxBodyBytes (%d bytes) must be read", limit)
		}
	}
	big := append(petBody(petstore.NewPet{Name: st.name("over the size limit"), CategoryID: 1}), bytes.Repeat([]byte(" "), int(limit))...)
	big = big[:limit+1]
	name := []byte(`{"name":"` + st.name("a long name") + strings.Repeat("a", int(limit)) + `","categoryId":1}`)
	for _, body := range [][]byte{big, name, bytes.Repeat([]byte("["), int(limit)+1)} {
		st.wantError(st.send(http.MethodPost, st.url("/pets"), body, nil), http.StatusRequestEntityTooLarge, "payload_too_large")
	}

	req := st.newRequest(http.MethodPost, st.url("/pets"), big)
	req.ContentLength = -1 // sent chunked, without Content-Length
	st.wantError(st.do(req), http.StatusRequestEntityTooLarge, "payload_too_large")
}

func (st *serverT) postKeyed(key string, p petstore.NewPet) *exchange {
	return st.send(http.MethodPost, st.url("/pets"), petBody(p), http.Header{"Idempotency-Key": {key}})
}

// newKey returns an idempotency key that no earlier run has used.
func newKey() string { return "petstoretest-" + rand.Text() }

func httpIdempotentReplay(st *serverT) {
	longest := newKey()
	longest += strings.Repeat("k", petstore.MaxIdempotencyKeyLength-len(longest))
	for _, key := range []string{newKey(), `"` + newKey() + `"`, longest} {
		p := petstore.NewPet{Name: st.name("Rex"), CategoryID: 1, Status: petstore.StatusAvailable}
		first, retry := st.postKeyed(key, p), st.postKeyed(key, p)
		created, ok := st.wantPet(first, http.StatusCreated)
		replayed, again := st.wantPet(retry, http.StatusCreated)
		if !ok || !again {
			continue
		}
		diff(st, fmt.Sprintf("%s: the pet of the retry", retry), created, replayed)
		diff(st, fmt.Sprintf("%s: Location and Idempotent-Replayed of the first create and of its retry", retry),
			[]string{first.resp.Header.Get("Location"), "", first.resp.Header.Get("Location"), "true"},
			[]string{first.resp.Header.Get("Location"), first.resp.Header.Get("Idempotent-Replayed"),
				retry.resp.Header.Get("Location"), retry.resp.Header.Get("Idempotent-Replayed")})
		st.get(created)
	}
}

func httpIdempotentReuse(st *serverT) {
	key := newKey()
	p := petstore.NewPet{Name: st.name("Rex"), CategoryID: 1}
	if x := st.postKeyed(key, p); !st.wantStatus(x, http.StatusCreated) {
		return
	}
	other := petstore.NewPet{Name: p.Name, CategoryID: 2}
	st.wantError(st.postKeyed(key, other), http.StatusUnprocessableEntity, "idempotency_key_reused")
}

// create adds p through POST /pets and returns the pet as created. It
// checks the answer against clauseCreate and stops the subtest when the pet
// was not created.
func (st *serverT) create(p petstore.NewPet) petstore.Pet {
	return st.createRaw(petBody(p), "application/json", p)
}

// createRaw sends body, which must create p, with the given Content-Type,
// as create does.
func (st *serverT) createRaw(body []byte, contentType string, p petstore.NewPet) petstore.Pet {
	st = st.under(clauseCreate)
	x := st.send(http.MethodPost, st.url("/pets"), body, http.Header{"Content-Type": {contentType}})
	got, ok := st.wantPet(x, http.StatusCreated)
	if !ok {
		st.FailNow()
	}
	if got.ID <= 0 {
		st.Errorf("%s: id %d is not positive", x, got.ID)
	}
	diff(st, fmt.Sprintf("%s: the pet created", x), p, got.NewPet)

	loc := x.resp.Header.Values("Location")
	resolved := fmt.Sprintf("%q", loc)
	if u, err := x.resp.Location(); err == nil && len(loc) == 1 {
		resolved = u.String()
	}
	diff(st, fmt.Sprintf("%s: Location %q resolved against the request's URL", x, loc), st.petURL(got.ID), resolved)
	return got
}

// get fetches the pet with want's ID and reports a violation when it is not
// want.
func (st *serverT) get(want petstore.Pet) *exchange {
	x := st.send(http.MethodGet, st.petURL(want.ID), nil, nil)
	if got, ok := st.wantPet(x, http.StatusOK); ok {
		diff(st, fmt.Sprintf("%s: the pet", x), want, got)
	}
	return x
}

func petBody(p petstore.NewPet) []byte {
	b, _ := json.Marshal(p) // a NewPet always marshals
	return b
}

func (st *serverT) petURL(id int64) string { return st.url("/pets/" + strconv.FormatInt(id, 10)) }

// longName returns name padded with pad to petstore.MaxNameLength
// characters.
func longName(name, pad string) string {
	return name + strings.Repeat(pad, petstore.MaxNameLength-utf8.RuneCountInString(name))
}

func httpCreate(st *serverT) {
	// The pets, each created from its body or, when body is empty, as a
	// JSON encoder writes it; NAME stands for a name unique to the run.
	long := longName(st.name("long"), "é")
	for _, tc := range []struct {
		body, contentType string
		want              petstore.NewPet
	}{
		{"", "application/json", petstore.NewPet{Name: "Rex NAME", CategoryID: 1, Status: petstore.StatusAvailable}},
		{"", "application/json; charset=utf-8", petstore.NewPet{Name: "Ünïcødé 名前 🐕 NAME", CategoryID: math.MaxInt64, Status: petstore.StatusPending}},
		{"", "Application/JSON", petstore.NewPet{Name: `quote " backslash \ <b>&amp;</b> 'apostrophe' NAME`, CategoryID: 1 << 40, Status: petstore.StatusSold}},
		{"", "application/json", petstore.NewPet{Name: "without a status NAME", CategoryID: 2}},
		{"", "application/json;charset=UTF-8", petstore.NewPet{Name: longName(st.name("long"), "𝄞"), CategoryID: math.MaxInt64 - 1}},
		{`{"name":"NAME","categoryId":1,"status":"pending"}`, "application/json", petstore.NewPet{Name: "NAME", CategoryID: 1, Status: petstore.StatusPending}},
		{`{"na\u006de":"NAME","categoryId":1}`, "application/json", petstore.NewPet{Name: "NAME", CategoryID: 1}},
		{`{"name":"\u00e9\ud83d\udc15\/ NAME","categoryId":2,"status":"sold"}`, "application/json", petstore.NewPet{Name: "é🐕/ NAME", CategoryID: 2, Status: petstore.StatusSold}},
		{`{"name":"\ud83d\udc36 NAME","categoryId":1}`, "application/json", petstore.NewPet{Name: "🐶 NAME", CategoryID: 1}},
		{"{\"name\":\"\xef\xbb\xbfNAME\",\"categoryId\":1}", "application/json", petstore.NewPet{Name: "\ufeffNAME", CategoryID: 1}},
		{`{"name":"` + long + `","categoryId":1}`, "application/json", petstore.NewPet{Name: long, CategoryID: 1}},
		{`{"categoryId":9223372036854775807,"name":"Ünïcødé 🐕 NAME"}`, "application/json; charset=utf-8", petstore.NewPet{Name: "Ünïcødé 🐕 NAME", CategoryID: math.MaxInt64}},
		{`{"name":"NAME","categoryId":1}`, "APPLICATION/JSON", petstore.NewPet{Name: "NAME", CategoryID: 1}},
		{` { "name" : "A\"<b>\\ NAME" , "categoryId" : 1 } `, "Application/JSON", petstore.NewPet{Name: `A"<b>\ NAME`, CategoryID: 1}},
	} {
		n := st.name("pet")
		want := tc.want
		want.Name = strings.ReplaceAll(want.Name, "NAME", n)
		body := []byte(strings.ReplaceAll(tc.body, "NAME", n))
		if tc.body == "" {
			body = petBody(want)
		}
		st.get(st.createRaw(body, tc.contentType, want))
	}
}

func httpGet(st *serverT) {
	for _, p := range st.createEach(2) {
		st.get(p)
	}
}

// deprecation is what httpGetDeprecation compares.
type deprecation struct {
	Deprecation     string // "@<unix seconds>" when well formed, else the values
	Sunset          string // "an HTTP date" when well formed, else the values
	SunsetNotBefore bool   // the sunset is not before the deprecation
	Successor       string // the successor-version link, resolved
}

func httpGetDeprecation(st *serverT) {
	deprecationValue := regexp.MustCompile(`^@[0-9]+$`)
	p := st.create(petstore.NewPet{Name: st.name("deprecated"), CategoryID: 1})
	want := deprecation{Deprecation: "@<unix seconds>", Sunset: "an HTTP date", SunsetNotBefore: true, Successor: st.url("/pets")}
	for _, method := range []string{http.MethodGet, http.MethodHead} {
		x := st.send(method, st.petURL(p.ID), nil, nil)
		if !st.wantStatus(x, http.StatusOK) {
			continue
		}
		h := x.resp.Header
		got := deprecation{Deprecation: fmt.Sprintf("%q", h.Values("Deprecation")), Sunset: fmt.Sprintf("%q", h.Values("Sunset"))}
		var deprecated, sunset int64
		if v := h.Values("Deprecation"); len(v) == 1 && deprecationValue.MatchString(v[0]) {
			got.Deprecation = want.Deprecation
			deprecated, _ = strconv.ParseInt(v[0][1:], 10, 64)
		}
		if v := h.Values("Sunset"); len(v) == 1 {
			if t, err := http.ParseTime(v[0]); err == nil && t.UTC().Format(http.TimeFormat) == v[0] {
				got.Sunset = want.Sunset
				sunset = t.Unix()
			}
		}
		got.SunsetNotBefore = got.Deprecation == want.Deprecation && got.Sunset == want.Sunset && sunset >= deprecated
		if u := st.linkRel(x, "successor-version"); u != nil {
			got.Successor = u.String()
		}
		diff(st, fmt.Sprintf("%s: deprecation headers (Deprecation %q, Sunset %q, Link %q)", x, h.Values("Deprecation"), h.Values("Sunset"), h.Values("Link")), want, got)
	}
}

func httpConditional(st *serverT) {
	a := st.create(petstore.NewPet{Name: st.name("tagged"), CategoryID: 1})
	b := st.create(petstore.NewPet{Name: st.name("tagged"), CategoryID: 1})
	path := "/pets/" + strconv.FormatInt(a.ID, 10)
	x := st.get(a)
	tag := x.resp.Header.Get("ETag")
	final := map[string]string{"ETag": tag, "Cache-Control": "private, max-age=3600", "Vary": "Authorization"}
	if !diff(st, x.String()+": the headers of a pet", final, map[string]string{
		"ETag": cmp.Or(tag, "a strong tag"), "Cache-Control": x.resp.Header.Get("Cache-Control"), "Vary": x.resp.Header.Get("Vary"),
	}) {
		return
	}
	inm := func(v string) http.Header { return http.Header{"If-None-Match": {v}} }
	reqs := []request{
		{path: path, header: inm(tag), status: 304, want: final},
		{method: http.MethodHead, path: path, header: inm(tag), status: 304, want: final},
		{path: path, header: inm("W/" + tag), status: 304, want: final},
		{path: path, header: inm(`"0000000000000000", ` + tag), status: 304, want: final},
		{path: path, header: inm("*"), status: 304, want: final},
		{path: path, header: inm("junk"), status: 200, want: final},
		{path: "/pets/0", header: inm("*"), status: 404, code: "not_found", want: map[string]string{"ETag": "", "Cache-Control": "no-store", "Vary": ""}},
	}

	// A page of one pet, with more after it, is full.
	page, next := st.wantPage("limit=1", 0, true)
	if next == nil {
		return
	}
	pageTag := page.resp.Header.Get("ETag")
	reqs = append(reqs, request{path: "/pets?limit=1", header: inm(pageTag), status: 304, want: map[string]string{
		"ETag": pageTag, "Cache-Control": "private, max-age=3600", "Vary": "Authorization", "Link": page.resp.Header.Get("Link"),
	}})
	st.sendAll(reqs)

	// Another pet, or the next page, with a tag that is not theirs.
	for u, tag := range map[string]string{st.petURL(b.ID): tag, next.String(): pageTag} {
		other := st.send(http.MethodGet, u, nil, http.Header{"If-None-Match": {tag}})
		if st.wantStatus(other, http.StatusOK) && other.resp.Header.Get("ETag") == tag {
			st.Errorf("%s: the ETag %s of another pet or page", other, tag)
		}
	}
}

// walk fetches the page of the list at start and follows its next links,
// calling visit with each page, its pets and its next Link resolved (nil on
// the last page), until a page has no next link or visit returns false. It
// checks every page against clauseList, and the order of the pets across
// pages; it stops at the first page that fails a check, such as one that
// does not advance, so that a broken Link cannot make it loop.
func (st *serverT) walk(start string, visit func(x *exchange, pets []petstore.Pet, next *url.URL) bool) {
	lt := st.under(clauseList)
	u := start
	var last int64
	for n := 0; ; n++ {
		x := lt.send(http.MethodGet, u, nil, nil)
		pets, ok := lt.wantPets(x)
		if !ok {
			return
		}
		limit := petstore.DefaultPageSize
		if l, err := strconv.Atoi(x.req.URL.Query().Get("limit")); err == nil {
			limit = l
		}
		if len(pets) > limit {
			lt.Errorf("%s: %d pets on a page of at most %d", x, len(pets), limit)
			return
		}
		for i, p := range pets {
			if (n > 0 || i > 0) && p.ID <= last {
				lt.Errorf("%s: pet %d comes after pet %d: the pets are not ascending by id across pages", x, p.ID, last)
				return
			}
			last = p.ID
		}
		next := st.linkRel(x, "next")
		if next != nil {
			if len(pets) == 0 {
				lt.Errorf("%s: an empty page has a next Link %q", x, x.resp.Header.Values("Link"))
				return
			}
			// start is a page of the list, and so, by this check, is every
			// page after it.
			if list := x.req.URL; next.Scheme != list.Scheme || next.Host != list.Host || next.Path != list.Path {
				lt.Errorf("%s: the next Link %q resolves to %s, which is not the list of pets %s", x, x.resp.Header.Values("Link"), next, st.url("/pets"))
				return
			}
		}
		if !visit(x, pets, next) || next == nil {
			return
		}
		u = next.String()
	}
}

// collect walks from start, calling between, when it is not nil, after each
// page that another follows, and returns the pets that it visits, in the
// order visited: those of created, and all.
func (st *serverT) collect(start string, created map[int64]petstore.Pet, between func(page int)) (mine, all []petstore.Pet) {
	page := 0
	st.walk(start, func(_ *exchange, pets []petstore.Pet, next *url.URL) bool {
		all = append(all, pets...)
		if between != nil && next != nil {
			between(page)
		}
		page++
		return true
	})
	mine = slices.DeleteFunc(slices.Clone(all), func(p petstore.Pet) bool { _, ok := created[p.ID]; return !ok })
	return mine, all
}

// startAt returns the URL of the page of the list that query selects which
// holds the pet with the given ID or, when that pet is not listed, the
// first pet after it, with the page size set to limit. Paging with small
// pages from there, instead of from the start of a store that may hold many
// pets, takes few requests.
func (st *serverT) startAt(query string, id int64, limit int) string {
	var at *url.URL
	st.walk(st.url("/pets?"+query), func(x *exchange, pets []petstore.Pet, _ *url.URL) bool {
		if len(pets) > 0 && pets[len(pets)-1].ID >= id {
			at = x.req.URL
			return false
		}
		return true
	})
	if at == nil {
		if !st.Failed() { // walk has not reported why
			st.Errorf("petstoretest: no page of GET /pets?%s holds pet %d or one after it", query, id)
		}
		st.FailNow()
	}
	q := at.Query()
	q.Set("limit", strconv.Itoa(limit))
	at.RawQuery = q.Encode()
	return at.String()
}

// createEach creates one pet for each status and one without, n times over,
// and returns them by ID.
func (st *serverT) createEach(n int) map[int64]petstore.Pet {
	created := map[int64]petstore.Pet{}
	for i := range n {
		for _, s := range statuses {
			p := st.create(petstore.NewPet{Name: st.name(cmp.Or(string(s), "no status")), CategoryID: int64(i + 1), Status: s})
			created[p.ID] = p
		}
	}
	return created
}

func sorted(m map[int64]petstore.Pet) []petstore.Pet { return byID(slices.Collect(maps.Values(m))) }

func httpListDefaultLimit(st *serverT) {
	st.createEach(petstore.DefaultPageSize/len(statuses) + 1)
	st.wantPage("", petstore.DefaultPageSize, true)
}

func httpListLimit(st *serverT) {
	st.createEach(1)
	st.wantPage("limit=1", 1, true)
	st.wantPage("limit=2", 2, true)
	st.wantPage("limit=%31", 1, true) // "1", percent-encoded
	x := st.send(http.MethodGet, st.url("/pets?limit=100"), nil, nil)
	if pets, ok := st.wantPets(x); ok && len(pets) > 100 {
		st.Errorf("%s: %d pets", x, len(pets))
	} else if ok && len(pets) < 100 && st.linkRel(x, "next") != nil {
		st.Errorf("%s: %d pets and a next Link %q: the page is not full, so no more follow", x, len(pets), x.resp.Header.Values("Link"))
	}
}

func httpListPagination(st *serverT) {
	created := st.createEach(2)
	visited, _ := st.collect(st.url("/pets?limit=100"), created, nil)
	diff(st, "the pets created, as visited paging with limit=100 from the start", sorted(created), visited)
}

func httpListPaginationWhileAdding(st *serverT) {
	created := st.createEach(1)
	first := sorted(created)[0].ID
	start := st.startAt("limit=100", first, 2)
	visited, _ := st.collect(start, created, func(page int) {
		if page < 4 {
			p := st.create(petstore.NewPet{Name: st.name("added between pages"), CategoryID: 1, Status: statuses[page%len(statuses)]})
			created[p.ID] = p
		}
	})
	diff(st, fmt.Sprintf("the pets created, as visited paging from %s while a pet is added between pages", start), sorted(created), visited)
}

func httpListStatus(st *serverT) {
	created := st.createEach(2)
	for _, s := range statuses[1:] {
		want := selectPets(sorted(created), petstore.ListOptions{Status: s})
		check := func(start string) {
			visited, all := st.collect(start, created, nil)
			others := slices.DeleteFunc(all, func(p petstore.Pet) bool { return p.Status == s })
			diff(st, fmt.Sprintf("pets without status %q listed paging from %s", s, start), []petstore.Pet{}, others)
			diff(st, fmt.Sprintf("the pets created with status %q, as visited paging from %s", s, start), want, visited)
		}
		check(st.url("/pets?limit=100&status=" + string(s)))
		check(st.startAt("limit=100&status="+string(s), want[0].ID, 1))
	}
}
