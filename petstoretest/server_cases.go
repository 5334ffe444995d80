package petstoretest

import (
	"crypto/rand"
	"fmt"
	"net/http"
	"strings"

	"github.com/petstore-go/petstore"
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
var serverCases = []serverCase{
	// Authentication.
	{
		name:   "auth-missing",
		clause: `A request without exactly one Authorization header is answered 401 unauthorized with WWW-Authenticate: Bearer realm="petstore" and no error.`,
		requests: func(st *serverT) []request {
			return append(st.onEachOperation(nil, 401, "unauthorized", challengeMissing),
				st.onEachOperation([]string{"Bearer " + st.e.APIKey, "Bearer " + st.e.APIKey}, 401, "unauthorized", challengeMissing)...)
		},
	},
	{
		name:   "auth-wrong-scheme",
		clause: `A credential in a scheme other than Bearer, or not parted from it by spaces, is answered 401 unauthorized with WWW-Authenticate: Bearer realm="petstore" and no error.`,
		requests: func(st *serverT) []request {
			var reqs []request
			for _, auth := range []string{
				"Basic " + st.e.APIKey,
				"Basic ZnV6ejpmdXp6",
				"Token " + st.e.APIKey,
				"Bearer" + st.e.APIKey,
				"Bearer\t" + st.e.APIKey,
				`Digest username="petstoretest"`,
			} {
				reqs = append(reqs, st.onEachOperation([]string{auth}, 401, "unauthorized", challengeMissing)...)
			}
			return reqs
		},
	},
	{
		name:   "auth-empty-token",
		clause: `An empty Authorization header, or Bearer with an empty token, is answered 401 unauthorized with WWW-Authenticate: Bearer realm="petstore" and no error.`,
		requests: func(st *serverT) []request {
			var reqs []request
			for _, auth := range []string{"", "Bearer", "Bearer ", "Bearer    ", "bearer"} {
				reqs = append(reqs, st.onEachOperation([]string{auth}, 401, "unauthorized", challengeMissing)...)
			}
			return reqs
		},
	},
	{
		name:   "auth-bad-token",
		clause: `A token that the server rejects is answered 401 unauthorized with WWW-Authenticate: Bearer realm="petstore", error="invalid_token", and the body does not repeat the token.`,
		requests: func(st *serverT) []request {
			tokens := []string{"petstoretest-" + rand.Text(), st.e.APIKey + "x", "a,b", "a b", "not a token!"}
			if len(st.e.APIKey) > 1 {
				tokens = append(tokens, st.e.APIKey[:len(st.e.APIKey)-1])
			}
			var reqs []request
			for _, token := range tokens {
				reqs = append(reqs, st.onEachOperation([]string{"Bearer " + token}, 401, "unauthorized", challengeInvalid)...)
			}
			return reqs
		},
	},
	{
		name:   "auth-scheme-case",
		clause: "The scheme Bearer is matched without regard to case, and may be followed by several spaces: bearer and BEARER work as Bearer does.",
		requests: func(st *serverT) []request {
			var reqs []request
			for _, scheme := range []string{"Bearer ", "bearer ", "BEARER ", "bEaReR   ", "bearer  "} {
				reqs = append(reqs, request{path: "/pets?limit=1", header: http.Header{"Authorization": {scheme + st.e.APIKey}}, status: 200, want: map[string]string{}})
			}
			return reqs
		},
	},
	{
		name:   "auth-before-routing",
		clause: "A request without a valid key is answered 401 also on unknown paths and with other methods, so that it learns nothing about the routes.",
		requests: func(st *serverT) []request {
			var reqs []request
			for _, tc := range []struct{ method, path string }{
				{http.MethodGet, "/no-such-path"},
				{http.MethodGet, "/store/orders"},
				{http.MethodGet, "/pets/"},
				{http.MethodDelete, "/orders"},
				{http.MethodDelete, "/pets"},
				{http.MethodPut, "/pets/1"},
				{http.MethodDelete, "/pets/1"},
			} {
				reqs = append(reqs,
					request{method: tc.method, path: tc.path, header: http.Header{"Authorization": nil}, status: 401, code: "unauthorized", want: challengeMissing},
					request{method: tc.method, path: tc.path, header: http.Header{"Authorization": {"Bearer petstoretest-" + rand.Text()}}, status: 401, code: "unauthorized", want: challengeInvalid})
			}
			return reqs
		},
	},

	// Validation.
	{
		name:   "list-invalid-limit",
		clause: "GET /pets with a limit that is not an integer, is below 1 or above 100, or is given twice is answered 400 invalid_parameter.",
		requests: invalidQueries(
			"limit=0", "limit=101", "limit=-1", "limit=1000000000000000000000", "limit=abc", "limit=1.5", "limit=1e1",
			"limit=0x10", "limit=", "limit=%20", "limit=%31%30%31", "limit=%zz", "limit=1&limit=2", "limit=1&limit=1", "limit=5;status=sold",
		),
	},
	{
		name:   "list-invalid-status",
		clause: "GET /pets with a status other than available, pending and sold, or given twice, is answered 400 invalid_parameter.",
		requests: invalidQueries(
			"status=unknown", "status=AVAILABLE", "status=Available", "status=", "status=available,sold",
			"status=%20available", "status=sold&status=sold", "status=sold&limit=1&status=lost",
		),
	},
	{
		name:   "list-invalid-cursor",
		clause: "GET /pets with a malformed cursor, or two, is answered 400 invalid_parameter.",
		requests: invalidQueries(
			"cursor=%2A%2A%2A", "cursor=!!", "cursor=a%20b", "cursor=%ZZ", "cursor=%%%", "limit=5&cursor=%3C%3E", "cursor=",
			"cursor=01", "cursor=0", "cursor=-1", "cursor=zzzzzzzzzzzzz", "cursor=1&cursor=2",
		),
	},
	{
		name:   "list-unknown-params",
		clause: "Query parameters that the API specification does not define are ignored; parameter names are matched exactly, after percent-decoding.",
		test:   httpListUnknownParams,
	},
	{
		name:   "get-invalid-id",
		clause: "GET /pets/{petId} with a petId that is not a base-10 int64 is answered 400 invalid_parameter.",
		requests: func(*serverT) []request {
			var reqs []request
			for _, id := range []string{
				"abc", "1.5", "1.0", "+1", "0x10", "1e3", "%201", "1%20", "%D9%A1", // an Arabic-Indic digit one
				"9223372036854775808", "-9223372036854775809", "99999999999999999999",
				"%00", "1%00", "1;x=y",
			} {
				reqs = append(reqs, request{path: "/pets/" + id, status: 400, code: "invalid_parameter"})
			}
			return reqs
		},
	},
	{
		name:     "create-invalid-body",
		clause:   "POST /pets with a body that is not one JSON object holding a valid name (1 to 256 characters of valid UTF-8, not blank, no control characters) and categoryId (1 or more), an optional valid status and nothing else, each once, is answered 400 invalid_body and creates no pet.",
		requests: invalidBodies,
	},
	{
		name:   "create-unsupported-media-type",
		clause: "POST /pets with a Content-Type other than one application/json (with or without parameters) is answered 415 unsupported_media_type with Accept-Post: application/json.",
		requests: func(st *serverT) []request {
			var reqs []request
			for _, ct := range [][]string{
				nil, {"text/plain"}, {"application/xml"}, {"application/json-patch+json"}, {"application/jsonx"},
				{"application/x-www-form-urlencoded"}, {"multipart/form-data; boundary=x"}, {"application/json", "application/json"},
			} {
				reqs = append(reqs, request{method: http.MethodPost, path: "/pets", body: st.validBody(), header: http.Header{"Content-Type": ct},
					status: 415, code: "unsupported_media_type", want: map[string]string{"Accept-Post": "application/json"}})
			}
			return reqs
		},
	},
	{
		name:   "create-too-large",
		clause: "POST /pets with a body over the size limit is answered 413 payload_too_large, whether or not it declares its length; a body of exactly the limit is read.",
		test:   httpCreateTooLarge,
	},

	// The operations.
	{
		name:   "create",
		clause: clauseCreate,
		test:   httpCreate,
	},
	{
		name:   "create-idempotent",
		clause: "POST /pets sent again with the same Idempotency-Key (1 to 255 visible ASCII characters) and the same pet answers 201 with the pet created first, the same Location and Idempotent-Replayed: true, and creates nothing.",
		test:   httpIdempotentReplay,
	},
	{
		name:   "create-idempotency-key-reused",
		clause: "POST /pets with an Idempotency-Key used before for another pet is answered 422 idempotency_key_reused.",
		test:   httpIdempotentReuse,
	},
	{
		name:   "create-idempotency-key-invalid",
		clause: "POST /pets with an Idempotency-Key that is not 1 to 255 visible ASCII characters, or with two, is answered 400 invalid_parameter and creates no pet.",
		requests: func(st *serverT) []request {
			var reqs []request
			for _, key := range [][]string{{""}, {strings.Repeat("k", petstore.MaxIdempotencyKeyLength+1)}, {"a key"}, {"a\tkey"}, {"clé"}, {"a", "b"}} {
				reqs = append(reqs, request{method: http.MethodPost, path: "/pets", body: st.validBody(), header: http.Header{"Idempotency-Key": key},
					status: 400, code: "invalid_parameter"})
			}
			return reqs
		},
	},
	{
		name:   "get",
		clause: "GET /pets/{petId} answers 200 with the pet as it was created.",
		test:   httpGet,
	},
	{
		name:   "get-deprecation",
		clause: `GET /pets/{petId} carries Deprecation: @<unix seconds>, Sunset: an HTTP date not before the deprecation, and a Link with rel="successor-version" that resolves to the list of pets.`,
		test:   httpGetDeprecation,
	},
	{
		name:   "get-unknown",
		clause: "GET /pets/{petId} with a well-formed petId that no pet has is answered 404 not_found.",
		requests: func(*serverT) []request {
			var reqs []request
			for _, id := range []string{"0", "-1", "9223372036854775807", "-9223372036854775808"} {
				reqs = append(reqs, request{path: "/pets/" + id, status: 404, code: "not_found"})
			}
			return reqs
		},
	},
	{
		name:   "conditional",
		clause: "A pet and a full page of the list carry a strong ETag, and GET or HEAD with If-None-Match naming it (also weakly, in a list, or as *) is answered 304 with the same ETag, Cache-Control and Link and no body; another tag, or a malformed one, gets the answer in full, and a 404 has no ETag.",
		test:   httpConditional,
	},
	{
		name:   "list-default-limit",
		clause: "GET /pets without a limit answers at most 20 pets, and exactly 20 with a next Link when more follow.",
		test:   httpListDefaultLimit,
	},
	{
		name:   "list-limit",
		clause: "GET /pets answers at most limit pets, and a next Link when more follow.",
		test:   httpListLimit,
	},
	{
		name:   "list-pagination",
		clause: `Following the Link with rel="next", resolved against the request's URL, visits every pet exactly once, in ascending order of id, with its fields as created; the last page has no next Link.`,
		test:   httpListPagination,
	},
	{
		name:   "list-pagination-while-adding",
		clause: "Paging through small pages visits every pet exactly once, in ascending order of id, also when pets are added between pages.",
		test:   httpListPaginationWhileAdding,
	},
	{
		name:   "list-status",
		clause: "GET /pets?status=S answers only pets with status S, and across its pages all of them, never a pet without a status; the next Link keeps the filter.",
		test:   httpListStatus,
	},

	// The protocol.
	{
		name:   "unknown-path",
		clause: "An unknown path under the base URL is answered 404 not_found, never with a redirect: paths are matched exactly, trailing slashes included.",
		requests: func(st *serverT) []request {
			var reqs []request
			for _, path := range []string{
				"/", "/pet", "/pets/", "/pets/1/", "/pets/1/photos", "/store/orders", "/orders", "/PETS", "/pets.json",
			} {
				reqs = append(reqs, request{path: path, status: 404, code: "not_found"})
			}
			for _, path := range []string{"/pets/", "/pet", "/store/orders"} {
				reqs = append(reqs, request{method: http.MethodPost, path: path, body: st.validBody(), status: 404, code: "not_found"})
			}
			return append(reqs, request{method: http.MethodDelete, path: "/orders", status: 404, code: "not_found"})
		},
	},
	{
		name:   "method-not-allowed",
		clause: "A known path with another method is answered 405 method_not_allowed with an Allow header that lists the methods the path answers, as the route table gives them (GET, HEAD, POST on /pets), and changes nothing.",
		test:   httpMethodNotAllowed,
	},
	{
		name:   "head",
		clause: "HEAD answers as GET does, with the same status and headers and no body.",
		test:   httpHead,
	},
}

// invalidQueries returns the requests of GET /pets with each query, each
// answered 400 invalid_parameter.
func invalidQueries(queries ...string) func(*serverT) []request {
	return func(*serverT) []request {
		reqs := make([]request, len(queries))
		for i, q := range queries {
			reqs[i] = request{path: "/pets?" + q, status: 400, code: "invalid_parameter"}
		}
		return reqs
	}
}

// invalidBodies returns the creates whose bodies are not a valid pet, each
// with a name unique to the run when the body has a name that could be
// stored.
func invalidBodies(st *serverT) []request {
	name := func() string { return fmt.Sprintf("%q", st.name("invalid")) }
	withName := func(n string) string { return `{"name":"` + n + `","categoryId":1}` }
	// Deep nesting within the body limit.
	deep := int(min(10_000, (st.e.MaxBodyBytes-100)/6))
	bodies := []string{
		// Documents that are not one JSON object.
		``, `null`, `[]`, `"pet"`, `{}`,
		`[{"name":` + name() + `,"categoryId":1}]`,
		`{"name":` + name() + `,"categoryId":1} {}`,
		`{"name":` + name() + `,"categoryId":1}{"name":` + name() + `,"categoryId":1}`,
		`{"name":` + name() + `,"categoryId":1}x`,
		`{"name":` + name() + `,"categoryId":1}` + "\x00",
		"\xef\xbb\xbf" + `{"name":` + name() + `,"categoryId":1}`,
		`{"name":` + name() + `,"categoryId":1,}`,
		`{"name":` + name() + `,"categoryId":1`,
		`{`,
		`{"name":` + name() + `,/* x */"categoryId":1}`,
		`{'name':'Rex','categoryId':1}`,
		strings.Repeat("[", deep*6),
		strings.Repeat(`{"a":`, deep) + "1" + strings.Repeat("}", deep),
		`{"name":` + strings.Repeat("[", deep*2) + `"x"` + strings.Repeat("]", deep*2) + `,"categoryId":1}`,
		// Members.
		`{"categoryId":1}`,
		`{"name":` + name() + `}`,
		`{"name":null,"categoryId":1}`,
		`{"name":` + name() + `,"categoryId":null}`,
		`{"name":` + name() + `,"categoryId":1,"status":null}`,
		`{"name":` + name() + `,"categoryId":1,"color":"red"}`,
		`{"Name":` + name() + `,"categoryId":1}`,
		`{"id":5,"name":` + name() + `,"categoryId":1}`,
		`{"name":` + name() + `,"name":` + name() + `,"categoryId":1}`,
		`{"name":` + name() + `,"categoryId":1,"name":` + name() + `}`,
		`{"name":` + name() + `,"categoryId":1,"categoryId":2}`,
		// Numbers.
		`{"name":` + name() + `,"categoryId":"1"}`,
		`{"name":` + name() + `,"categoryId":1.0}`,
		`{"name":` + name() + `,"categoryId":1.5}`,
		`{"name":` + name() + `,"categoryId":1e2}`,
		`{"name":` + name() + `,"categoryId":1e400}`,
		`{"name":` + name() + `,"categoryId":true}`,
		`{"name":` + name() + `,"categoryId":99999999999999999999}`,
		`{"name":` + name() + `,"categoryId":9223372036854775808}`,
		`{"name":` + name() + `,"categoryId":-0}`,
		`{"name":` + name() + `,"categoryId":01}`,
		`{"name":` + name() + `,"categoryId":NaN}`,
		`{"name":` + name() + `,"categoryId":0}`,
		`{"name":` + name() + `,"categoryId":-3}`,
		// Names.
		`{"name":7,"categoryId":1}`,
		withName(""), withName("   "), withName(`  \t `), withName(`\u00a0`), withName(`\u00a0 `),
		withName(strings.Repeat("a", petstore.MaxNameLength+1)),
		withName(strings.Repeat("é", petstore.MaxNameLength+1)),
		withName("R\xffex"), withName(`R\ud800ex`), withName("R\x00ex"), withName(`R\u0000ex`), withName(`R\u0007ex`),
		withName(`a\u0007`), withName(`R\u007fex`), withName(`R\u0085ex`), withName("R\nex"), withName(`R\nex`), withName("tab\there"),
		// The status member.
		`{"name":` + name() + `,"categoryId":1,"status":1}`,
		`{"name":` + name() + `,"categoryId":1,"status":"lost"}`,
		`{"name":` + name() + `,"categoryId":1,"status":""}`,
		`{"name":` + name() + `,"categoryId":1,"status":"SOLD"}`,
	}
	reqs := make([]request, len(bodies))
	for i, b := range bodies {
		reqs[i] = request{method: http.MethodPost, path: "/pets", body: b, status: 400, code: "invalid_body"}
	}
	return reqs
}
