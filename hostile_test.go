package petstore_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/httpapi"
)

// hostileCase is a request that a hostile or careless client might send,
// and the exact answer the handler must give it.
type hostileCase struct {
	name   string
	method string // GET when empty
	target string
	body   string
	// header replaces the default headers (Authorization: Bearer fuzzKey
	// and, unless the method is GET, Content-Type: application/json) for the keys it has;
	// a nil value removes the header.
	header http.Header

	status     int
	code       httpapi.Code      // "" for a success
	wantHeader map[string]string // headers the answer must carry
	wantBody   string            // the exact body of a success, when set
	created    *petstore.NewPet  // the pet that an accepted create stores
}

// hostileJSON returns a POST body holding name and categoryId 1.
func hostileJSON(name string) string {
	return `{"name":"` + name + `","categoryId":1}`
}

func hostileCases() []hostileCase {
	const post = http.MethodPost
	badBody := func(name, body string) hostileCase {
		return hostileCase{name: name, method: post, target: "/v1/pets", body: body, status: 400, code: httpapi.CodeInvalidBody}
	}
	created := func(name, body string, p petstore.NewPet) hostileCase {
		return hostileCase{name: name, method: post, target: "/v1/pets", body: body, status: 201, created: &p}
	}
	auth := func(values ...string) http.Header { return http.Header{"Authorization": values} }
	contentType := func(values ...string) http.Header { return http.Header{"Content-Type": values} }
	badParam := func(name, target string) hostileCase {
		return hostileCase{name: name, target: target, status: 400, code: httpapi.CodeInvalidParameter}
	}
	notFound := func(name, target string) hostileCase {
		return hostileCase{name: name, target: target, status: 404, code: httpapi.CodeNotFound}
	}
	listed := func(name, target string) hostileCase {
		return hostileCase{name: name, target: target, status: 200}
	}
	missing := map[string]string{"WWW-Authenticate": `Bearer realm="petstore"`}
	invalid := map[string]string{"WWW-Authenticate": `Bearer realm="petstore", error="invalid_token"`}
	rex := petstore.NewPet{Name: "Rex", CategoryID: 1}
	valid := `{"name":"Rex","categoryId":1}`
	longName := strings.Repeat("é", petstore.MaxNameLength)

	return []hostileCase{
		// Malformed and deeply nested JSON.
		badBody("60k open brackets", strings.Repeat("[", 60_000)),
		{name: "100k open brackets over the 64 KiB limit", method: post, target: "/v1/pets", body: strings.Repeat("[", 100_000), status: 413, code: httpapi.CodePayloadTooLarge},
		badBody("10k nested objects", strings.Repeat(`{"a":`, 10_000)+"1"+strings.Repeat("}", 10_000)),
		badBody("name nested in 20k arrays", `{"name":`+strings.Repeat("[", 20_000)+`"x"`+strings.Repeat("]", 20_000)+`,"categoryId":1}`),
		badBody("empty body", ""),
		badBody("null document", "null"),
		badBody("array document", "[]"),
		badBody("object without members", "{}"),
		badBody("trailing data", valid+`{}`),
		badBody("trailing comma", `{"name":"Rex","categoryId":1,}`),
		badBody("unterminated object", `{"name":"Rex","categoryId":1`),
		badBody("comment", `{"name":"Rex",/* x */"categoryId":1}`),
		badBody("single quotes", `{'name':'Rex','categoryId':1}`),
		// Numbers.
		badBody("huge exponent", `{"name":"Rex","categoryId":1e400}`),
		badBody("20-digit number", `{"name":"Rex","categoryId":99999999999999999999}`),
		badBody("int64 max plus one", `{"name":"Rex","categoryId":9223372036854775808}`),
		created("int64 max", `{"name":"Rex","categoryId":9223372036854775807}`, petstore.NewPet{Name: "Rex", CategoryID: 9223372036854775807}),
		badBody("number as a string", `{"name":"Rex","categoryId":"1"}`),
		badBody("name as a number", `{"name":1,"categoryId":1}`),
		badBody("fraction", `{"name":"Rex","categoryId":1.0}`),
		badBody("minus zero", `{"name":"Rex","categoryId":-0}`),
		badBody("leading zero", `{"name":"Rex","categoryId":01}`),
		badBody("NaN", `{"name":"Rex","categoryId":NaN}`),
		// Members.
		badBody("duplicate name", `{"name":"Rex","categoryId":1,"name":"Max"}`),
		badBody("duplicate categoryId", `{"name":"Rex","categoryId":1,"categoryId":2}`),
		badBody("unknown member", `{"name":"Rex","categoryId":1,"color":"red"}`),
		badBody("id sent", `{"id":1,"name":"Rex","categoryId":1}`),
		badBody("member name in another case", `{"Name":"Rex","categoryId":1}`),
		badBody("status null", `{"name":"Rex","categoryId":1,"status":null}`),
		badBody("status in capitals", `{"name":"Rex","categoryId":1,"status":"SOLD"}`),
		created("escaped member name", `{"na\u006de":"Rex","categoryId":1}`, rex),
		// Strings.
		badBody("invalid UTF-8", hostileJSON("R\xffex")),
		badBody("raw NUL in name", hostileJSON("R\x00ex")),
		badBody("escaped NUL in name", hostileJSON(`R\u0000ex`)),
		badBody("NUL after the object", valid+"\x00"),
		{name: "1 MiB name over the 64 KiB limit", method: post, target: "/v1/pets", body: hostileJSON(strings.Repeat("a", 1<<20)), status: 413, code: httpapi.CodePayloadTooLarge},
		badBody("257 characters", hostileJSON(strings.Repeat("a", petstore.MaxNameLength+1))),
		created("256 two-byte characters", hostileJSON(longName), petstore.NewPet{Name: longName, CategoryID: 1}),
		badBody("escaped bell", hostileJSON(`R\u0007ex`)),
		badBody("escaped DEL", hostileJSON(`R\u007fex`)),
		badBody("escaped C1 control", hostileJSON(`R\u0085ex`)),
		badBody("raw newline in name", hostileJSON("R\nex")),
		badBody("escaped newline in name", hostileJSON(`R\nex`)),
		badBody("byte order mark before the object", "\xef\xbb\xbf"+valid),
		created("byte order mark in name", hostileJSON("\xef\xbb\xbfRex"), petstore.NewPet{Name: "\ufeffRex", CategoryID: 1}),
		badBody("lone surrogate", hostileJSON(`R\ud800ex`)),
		created("surrogate pair", hostileJSON(`\ud83d\udc36`), petstore.NewPet{Name: "🐶", CategoryID: 1}),
		badBody("blank name", hostileJSON("   ")),
		badBody("no-break space name", hostileJSON(`\u00a0`)),
		// Content types.
		{name: "text/plain", method: post, target: "/v1/pets", body: valid, header: contentType("text/plain"), status: 415, code: httpapi.CodeUnsupportedMediaType, wantHeader: map[string]string{"Accept-Post": "application/json"}},
		{name: "no Content-Type", method: post, target: "/v1/pets", body: valid, header: contentType(), status: 415, code: httpapi.CodeUnsupportedMediaType, wantHeader: map[string]string{"Accept-Post": "application/json"}},
		{name: "application/json-patch+json", method: post, target: "/v1/pets", body: valid, header: contentType("application/json-patch+json"), status: 415, code: httpapi.CodeUnsupportedMediaType},
		{name: "application/jsonx", method: post, target: "/v1/pets", body: valid, header: contentType("application/jsonx"), status: 415, code: httpapi.CodeUnsupportedMediaType},
		{name: "two Content-Types", method: post, target: "/v1/pets", body: valid, header: contentType("application/json", "application/json"), status: 415, code: httpapi.CodeUnsupportedMediaType},
		{name: "charset parameter", method: post, target: "/v1/pets", body: valid, header: contentType("application/json; charset=utf-8"), status: 201, created: &rex},
		{name: "media type in capitals", method: post, target: "/v1/pets", body: valid, header: contentType("APPLICATION/JSON"), status: 201, created: &rex},
		// Authorization.
		{name: "two Authorization headers", target: "/v1/pets", header: auth("Bearer "+fuzzKey, "Bearer "+fuzzKey), status: 401, code: httpapi.CodeUnauthorized, wantHeader: missing},
		{name: "Bearer without token", target: "/v1/pets", header: auth("Bearer"), status: 401, code: httpapi.CodeUnauthorized, wantHeader: missing},
		{name: "Bearer and spaces", target: "/v1/pets", header: auth("Bearer   "), status: 401, code: httpapi.CodeUnauthorized, wantHeader: missing},
		{name: "empty Authorization", target: "/v1/pets", header: auth(""), status: 401, code: httpapi.CodeUnauthorized, wantHeader: missing},
		{name: "Basic scheme", target: "/v1/pets", header: auth("Basic ZnV6ejpmdXp6"), status: 401, code: httpapi.CodeUnauthorized, wantHeader: missing},
		{name: "tab after Bearer", target: "/v1/pets", header: auth("Bearer\t" + fuzzKey), status: 401, code: httpapi.CodeUnauthorized, wantHeader: missing},
		{name: "token with invalid characters", target: "/v1/pets", header: auth("Bearer fuzz-key!0123"), status: 401, code: httpapi.CodeUnauthorized, wantHeader: invalid},
		{name: "token with a header injection", target: "/v1/pets", header: auth("Bearer " + fuzzKey + "\r\nX-Admin: 1"), status: 401, code: httpapi.CodeUnauthorized, wantHeader: invalid},
		{name: "1 MiB token", target: "/v1/pets", header: auth("Bearer " + strings.Repeat("k", 1<<20)), status: 401, code: httpapi.CodeUnauthorized, wantHeader: invalid},
		{name: "key prefix", target: "/v1/pets", header: auth("Bearer " + fuzzKey[:len(fuzzKey)-1]), status: 401, code: httpapi.CodeUnauthorized, wantHeader: invalid},
		{name: "scheme in lower case, two spaces", target: "/v1/pets", header: auth("bearer  " + fuzzKey), status: 200},
		// Paths.
		notFound("encoded slash after pets", "/v1/pets%2F1"),
		badParam("encoded slash as petId", "/v1/pets/%2F"),
		badParam("encoded slash in petId", "/v1/pets/1%2F2"),
		notFound("dot-dot segment is not cleaned", "/v1/pets/../pets"),
		badParam("dot-dot as petId", "/v1/pets/.."),
		notFound("double slash before pets", "/v1//pets"),
		notFound("double slash before petId", "/v1/pets//1"),
		notFound("trailing slash after pets", "/v1/pets/"),
		notFound("trailing slash after petId", "/v1/pets/1/"),
		notFound("path in capitals", "/V1/PETS"),
		badParam("100k-digit petId", "/v1/pets/"+strings.Repeat("9", 100_000)),
		notFound("100k-character path", "/v1/"+strings.Repeat("a", 100_000)),
		{name: "percent-encoded petId", target: "/v1/pets/%31", status: 200, wantBody: `{"id":1,"name":"pet 1","categoryId":1,"status":"available"}`},
		badParam("encoded NUL as petId", "/v1/pets/%00"),
		badParam("encoded NUL after petId", "/v1/pets/1%00"),
		badParam("plus sign", "/v1/pets/+1"),
		notFound("negative petId", "/v1/pets/-1"),
		notFound("zero petId", "/v1/pets/0"),
		badParam("petId over int64", "/v1/pets/9223372036854775808"),
		badParam("petId with a parameter", "/v1/pets/1;x=y"),
		// Queries.
		badParam("limit twice", "/v1/pets?limit=1&limit=1"),
		badParam("limit with exponent", "/v1/pets?limit=1e2"),
		badParam("negative limit", "/v1/pets?limit=-1"),
		badParam("hexadecimal limit", "/v1/pets?limit=0x10"),
		badParam("limit zero", "/v1/pets?limit=0"),
		badParam("limit 101", "/v1/pets?limit=101"),
		badParam("empty limit", "/v1/pets?limit="),
		{name: "percent-encoded limit", target: "/v1/pets?limit=%31", status: 200, wantBody: `[{"id":1,"name":"pet 1","categoryId":1,"status":"available"}]`},
		badParam("malformed escape in cursor", "/v1/pets?cursor=%%%"),
		badParam("punctuation cursor", "/v1/pets?cursor=!!"),
		badParam("cursor zero", "/v1/pets?cursor=0"),
		badParam("cursor overflows int64", "/v1/pets?cursor=zzzzzzzzzzzzz"),
		{name: "well-formed cursor past the end", target: "/v1/pets?cursor=garbage", status: 200, wantBody: `[]`},
		badParam("status in capitals", "/v1/pets?status=AVAILABLE"),
		badParam("empty status", "/v1/pets?status="),
		badParam("semicolon separator", "/v1/pets?limit=5;status=sold"),
		listed("unknown parameter", "/v1/pets?foo=bar"),
		listed("undecodable key", "/v1/pets?%zz=1"),
		listed("parameter name in another case", "/v1/pets?Limit=0"),
		// Methods.
		{name: "DELETE pets", method: http.MethodDelete, target: "/v1/pets", status: 405, code: httpapi.CodeMethodNotAllowed, wantHeader: map[string]string{"Allow": "GET, HEAD, POST"}},
		{name: "PUT pet", method: http.MethodPut, target: "/v1/pets/1", body: valid, status: 405, code: httpapi.CodeMethodNotAllowed, wantHeader: map[string]string{"Allow": "GET, HEAD"}},
		{name: "PATCH pet", method: http.MethodPatch, target: "/v1/pets/1", body: valid, status: 405, code: httpapi.CodeMethodNotAllowed, wantHeader: map[string]string{"Allow": "GET, HEAD"}},
		{name: "POST pet", method: post, target: "/v1/pets/1", body: valid, status: 405, code: httpapi.CodeMethodNotAllowed, wantHeader: map[string]string{"Allow": "GET, HEAD"}},
		{name: "OPTIONS pets", method: http.MethodOptions, target: "/v1/pets", status: 405, code: httpapi.CodeMethodNotAllowed, wantHeader: map[string]string{"Allow": "GET, HEAD, POST"}},
		{name: "TRACE pets", method: http.MethodTrace, target: "/v1/pets", status: 405, code: httpapi.CodeMethodNotAllowed},
		{name: "method in lower case", method: "get", target: "/v1/pets", status: 405, code: httpapi.CodeMethodNotAllowed, wantHeader: map[string]string{"Allow": "GET, HEAD, POST"}},
		{name: "DELETE unknown path", method: http.MethodDelete, target: "/v1/orders", status: 404, code: httpapi.CodeNotFound},
	}
}

// TestHostileRequests sends every hostileCase through the real handler and
// checks its exact status, code and headers, and that the store holds
// exactly what it held before, plus the pet of an accepted create.
func TestHostileRequests(t *testing.T) {
	cases := hostileCases()
	t.Logf("%d hostile requests", len(cases))
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env := fuzzNewEnv(t)
			before := fuzzSnapshot(t, env.store)

			w := env.serve(hostileRequest(t, tc))
			code := fuzzCheckResponse(t, w)
			if w.Code != tc.status || code != tc.code {
				got := w.Body.String()
				if len(got) > 300 {
					got = got[:300] + "…"
				}
				t.Fatalf("status %d %q, want %d %q; body %s", w.Code, code, tc.status, tc.code, got)
			}
			for k, want := range tc.wantHeader {
				if got := w.Header().Values(k); len(got) != 1 || got[0] != want {
					t.Errorf("header %s = %q, want %q", k, got, want)
				}
			}
			if tc.wantBody != "" {
				if diff := cmp.Diff(tc.wantBody, w.Body.String()); diff != "" {
					t.Errorf("body (-want +got):\n%s", diff)
				}
			}

			want := before
			if tc.created != nil {
				want = append(want, petstore.Pet{ID: int64(len(before) + 1), NewPet: *tc.created})
			}
			if diff := cmp.Diff(want, fuzzSnapshot(t, env.store)); diff != "" {
				t.Errorf("store after the request (-want +got):\n%s", diff)
			}
		})
	}
}

// hostileRequest builds the request of tc, its target parsed as a server
// parses a request line.
func hostileRequest(t *testing.T, tc hostileCase) *http.Request {
	t.Helper()
	method := tc.method
	if method == "" {
		method = http.MethodGet
	}
	u, err := url.ParseRequestURI(tc.target)
	if err != nil {
		t.Fatalf("test bug: a server would reject the target %q before the handler: %v", tc.target, err)
	}
	r := httptest.NewRequest(method, "/", strings.NewReader(tc.body))
	r.URL, r.RequestURI = u, tc.target
	r.Header.Set("Authorization", "Bearer "+fuzzKey)
	if method != http.MethodGet {
		r.Header.Set("Content-Type", "application/json")
	}
	for k, v := range tc.header {
		if len(v) == 0 {
			delete(r.Header, k)
			continue
		}
		r.Header[k] = v
	}
	return r
}
