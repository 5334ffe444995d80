package wirecases

import (
	"net/http"
	"strings"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/httpapi"
)

// valid is the body of a valid create.
const valid = `{"name":"Rex","categoryId":1}`

// The challenges of a 401: for a request without usable credentials, and
// for one whose token is not accepted.
const (
	challengeMissing = `Bearer realm="petstore"`
	challengeInvalid = `Bearer realm="petstore", error="invalid_token"`
)

// Allow values of the routes, from the route table.
var (
	allowPets = petstore.Allow("/pets")
	allowPet  = petstore.Allow("/pets/{petId}")
)

// auth returns a header with the Authorization values; none removes it.
func auth(values ...string) http.Header { return http.Header{"Authorization": values} }

// contentType returns a header with the Content-Type values; none removes it.
func contentType(values ...string) http.Header { return http.Header{"Content-Type": values} }

// withName returns the body of a create with name and categoryId 1.
func withName(name string) string { return `{"name":"` + name + `","categoryId":1}` }

func authCases() []Case {
	missing := func(name, method, target, body string, header http.Header) Case {
		return Case{Name: name, Method: method, Target: target, Body: body, Header: header,
			Status: 401, Code: httpapi.CodeUnauthorized, WantHeader: map[string]string{"WWW-Authenticate": challengeMissing}}
	}
	invalid := func(name, method, target, body string, header http.Header) Case {
		return Case{Name: name, Method: method, Target: target, Body: body, Header: header,
			Status: 401, Code: httpapi.CodeUnauthorized, WantHeader: map[string]string{"WWW-Authenticate": challengeInvalid}}
	}
	accepted := func(name, value string) Case {
		return Case{Name: name, Target: "/v1/pets?limit=1", Header: auth(value), Status: 200,
			WantHeader: map[string]string{"Link": `<?limit=1&cursor=1>; rel="next"`}, WantBody: Page(1, 1)}
	}
	return []Case{
		// Without credentials, on every operation, other methods and unknown paths.
		missing("no Authorization", "", "/v1/pets", "", auth()),
		missing("no Authorization on create", http.MethodPost, "/v1/pets", valid, auth()),
		missing("no Authorization on get", "", "/v1/pets/1", "", auth()),
		missing("no Authorization on unknown path", "", "/v1/orders", "", auth()),
		missing("no Authorization on other method of a pet", http.MethodDelete, "/v1/pets/1", "", auth()),
		missing("no Authorization on other method of the collection", http.MethodDelete, "/v1/pets", "", auth()),
		// Credentials that are not a bearer token.
		missing("empty Authorization", "", "/v1/pets", "", auth("")),
		missing("Basic scheme with the key", "", "/v1/pets", "", auth("Basic "+Key)),
		missing("Basic scheme with user and password", "", "/v1/pets", "", auth("Basic ZnV6ejpmdXp6")),
		missing("scheme alone", "", "/v1/pets", "", auth("Bearer")),
		missing("empty token", "", "/v1/pets", "", auth("Bearer ")),
		missing("scheme and spaces", "", "/v1/pets", "", auth("Bearer   ")),
		missing("tab after the scheme", "", "/v1/pets", "", auth("Bearer\t"+Key)),
		missing("two Authorization headers", "", "/v1/pets", "", auth("Bearer "+Key, "Bearer "+Key)),
		// Tokens that are not accepted.
		invalid("wrong key", "", "/v1/pets", "", auth("Bearer wrong-key")),
		invalid("wrong key on create", http.MethodPost, "/v1/pets", valid, auth("Bearer wrong-key")),
		invalid("wrong key on get", "", "/v1/pets/1", "", auth("Bearer wrong-key")),
		invalid("key with a suffix", "", "/v1/pets", "", auth("Bearer "+Key+"x")),
		invalid("key prefix", "", "/v1/pets", "", auth("Bearer "+Key[:len(Key)-1])),
		invalid("token with a comma", "", "/v1/pets", "", auth("Bearer a,b")),
		invalid("token with a space", "", "/v1/pets", "", auth("Bearer a b")),
		invalid("token with an exclamation mark", "", "/v1/pets", "", auth("Bearer fuzz-key!0123")),
		invalid("token with a header injection", "", "/v1/pets", "", auth("Bearer "+Key+"\r\nX-Admin: 1")),
		invalid("1 MiB token", "", "/v1/pets", "", auth("Bearer "+strings.Repeat("k", 1<<20))),
		// The scheme in any case, followed by one or more spaces.
		accepted("scheme in lower case", "bearer "+Key),
		accepted("scheme in capitals", "BEARER "+Key),
		accepted("scheme in mixed case, three spaces", "bEaReR   "+Key),
		accepted("scheme in lower case, two spaces", "bearer  "+Key),
	}
}

func queryCases() []Case {
	bad := func(name, query string) Case {
		return Case{Name: name, Target: "/v1/pets?" + query, Status: 400, Code: httpapi.CodeInvalidParameter}
	}
	listed := func(name, query, body, link string) Case {
		c := Case{Name: name, Target: "/v1/pets", Status: 200, WantBody: body, WantHeader: map[string]string{}}
		if query != "" {
			c.Target += "?" + query
		}
		c.WantHeader["Link"] = link // none when link is ""
		return c
	}
	all := Page(1, 30)
	first := Page(1, 1)
	nextAfter1 := `<?limit=1&cursor=1>; rel="next"`
	return []Case{
		// limit.
		bad("limit not an integer", "limit=ten"),
		bad("limit empty", "limit="),
		bad("limit 0", "limit=0"),
		bad("limit negative", "limit=-1"),
		bad("limit 101", "limit=101"),
		bad("limit of 23 digits", "limit=99999999999999999999999"),
		bad("limit fraction", "limit=1.5"),
		bad("limit with exponent", "limit=1e2"),
		bad("limit hexadecimal", "limit=0x10"),
		bad("limit twice, the same", "limit=1&limit=1"),
		bad("limit twice, different", "limit=1&limit=2"),
		bad("limit malformed escape", "limit=%zz"),
		bad("semicolon separator", "limit=5;status=sold"),
		// status.
		bad("status parameter unknown", "status=lost"),
		bad("status parameter in capitals", "status=AVAILABLE"),
		bad("status parameter empty", "status="),
		bad("status parameter twice", "status=sold&status=sold"),
		// cursor.
		bad("cursor punctuation", "cursor=!!"),
		bad("cursor empty", "cursor="),
		bad("cursor with leading zero", "cursor=01"),
		bad("cursor zero", "cursor=0"),
		bad("cursor negative", "cursor=-1"),
		bad("cursor overflows int64", "cursor=zzzzzzzzzzzzz"),
		bad("cursor malformed escape", "cursor=%%%"),
		bad("cursor twice", "cursor=1&cursor=2"),
		// Accepted queries, with the exact page and link.
		listed("default page", "", Page(1, 20), `<?limit=20&cursor=k>; rel="next"`),
		listed("limit 1", "limit=1", first, nextAfter1),
		listed("limit 2", "limit=2", Page(1, 2), `<?limit=2&cursor=2>; rel="next"`),
		listed("limit 2 after a cursor", "limit=2&cursor=2", Page(3, 4), `<?limit=2&cursor=4>; rel="next"`),
		listed("limit equal to what is left", "limit=4&cursor=q", Page(27, 30), ""),
		listed("limit 100", "limit=100", all, ""),
		listed("limit percent-encoded", "limit=%31", first, nextAfter1),
		listed("by status", "status=pending", pages(2, 6, 10, 14, 18, 22, 26, 30), ""),
		listed("by status with limit", "status=sold&limit=1", pages(3), `<?limit=1&status=sold&cursor=3>; rel="next"`),
		listed("cursor at the end", "cursor=u", "[]", ""),
		listed("cursor past the end", "cursor=zzzzzz", "[]", ""),
		listed("cursor that is a word past the end", "cursor=garbage", "[]", ""),
		listed("unknown parameters", "colour=red&limit=1&page=7", first, nextAfter1),
		listed("unknown parameter alone", "foo=bar", Page(1, 20), `<?limit=20&cursor=k>; rel="next"`),
		listed("parameter name percent-encoded", "%6Cimit=1", first, nextAfter1),
		listed("parameter name that does not decode", "%zz=1", Page(1, 20), `<?limit=20&cursor=k>; rel="next"`),
		listed("parameter name in another case", "Limit=0", Page(1, 20), `<?limit=20&cursor=k>; rel="next"`),
		{Name: "HEAD list", Method: http.MethodHead, Target: "/v1/pets?limit=1", Status: 200, WantHeader: map[string]string{"Link": nextAfter1}},
	}
}

func petIDCases() []Case {
	bad := func(name, target string) Case {
		return Case{Name: name, Target: target, Status: 400, Code: httpapi.CodeInvalidParameter}
	}
	unknown := func(name, target string) Case {
		return Case{Name: name, Target: target, Status: 404, Code: httpapi.CodeNotFound}
	}
	found := func(name, target string, id int) Case {
		return Case{Name: name, Target: target, Status: 200, WantBody: Pet(id)}
	}
	return []Case{
		found("get", "/v1/pets/1", 1),
		found("get a pet without status", "/v1/pets/4", 4),
		found("petId percent-encoded", "/v1/pets/%31", 1),
		{Name: "HEAD get", Method: http.MethodHead, Target: "/v1/pets/1", Status: 200},
		bad("petId a word", "/v1/pets/rex"),
		bad("petId letters", "/v1/pets/abc"),
		bad("petId with plus sign", "/v1/pets/+1"),
		bad("petId fraction", "/v1/pets/1.0"),
		bad("petId hexadecimal", "/v1/pets/0x1"),
		bad("petId over int64", "/v1/pets/9223372036854775808"),
		bad("petId of 100k digits", "/v1/pets/"+strings.Repeat("9", 100_000)),
		bad("petId an encoded slash", "/v1/pets/%2F"),
		bad("petId with an encoded slash", "/v1/pets/1%2F2"),
		bad("petId dot-dot", "/v1/pets/.."),
		bad("petId an encoded NUL", "/v1/pets/%00"),
		bad("petId with an encoded NUL", "/v1/pets/1%00"),
		bad("petId with a parameter", "/v1/pets/1;x=y"),
		unknown("no such pet", "/v1/pets/99"),
		unknown("no such pet, six digits", "/v1/pets/999999"),
		unknown("pet 0", "/v1/pets/0"),
		unknown("negative pet", "/v1/pets/-1"),
		unknown("largest int64 pet", "/v1/pets/9223372036854775807"),
	}
}

func bodyCases() []Case {
	bad := func(name, body string) Case {
		return Case{Name: name, Method: http.MethodPost, Target: "/v1/pets", Body: body, Header: contentType("application/json"),
			Status: 400, Code: httpapi.CodeInvalidBody}
	}
	tooLarge := func(name, body string) Case {
		return Case{Name: name, Method: http.MethodPost, Target: "/v1/pets", Body: body, Status: 413, Code: httpapi.CodePayloadTooLarge}
	}
	unsupported := func(name string, header http.Header) Case {
		return Case{Name: name, Method: http.MethodPost, Target: "/v1/pets", Body: valid, Header: header,
			Status: 415, Code: httpapi.CodeUnsupportedMediaType, WantHeader: map[string]string{"Accept-Post": "application/json"}}
	}
	created := func(name, body string, p petstore.NewPet) Case {
		return Case{Name: name, Method: http.MethodPost, Target: "/v1/pets", Body: body, Status: 201, Created: &p}
	}
	createdAs := func(name, mediaType, body string, p petstore.NewPet) Case {
		c := created(name, body, p)
		c.Header = contentType(mediaType)
		return c
	}
	rex := petstore.NewPet{Name: "Rex", CategoryID: 1}
	twoByteName := strings.Repeat("é", petstore.MaxNameLength)
	return []Case{
		// Accepted creates.
		created("create", valid, rex),
		created("create with status", `{"name":"Rex","categoryId":1,"status":"pending"}`,
			petstore.NewPet{Name: "Rex", CategoryID: 1, Status: petstore.StatusPending}),
		created("create with the largest categoryId", `{"name":"Rex","categoryId":9223372036854775807}`,
			petstore.NewPet{Name: "Rex", CategoryID: 9223372036854775807}),
		created("create with an escaped member name", `{"na\u006de":"Rex","categoryId":1}`, rex),
		created("create with escapes", `{"name":"\u00e9\ud83d\udc15\/","categoryId":2,"status":"sold"}`,
			petstore.NewPet{Name: "é🐕/", CategoryID: 2, Status: petstore.StatusSold}),
		created("create with a surrogate pair", withName(`\ud83d\udc36`), petstore.NewPet{Name: "🐶", CategoryID: 1}),
		created("create with 256 two-byte characters", withName(twoByteName), petstore.NewPet{Name: twoByteName, CategoryID: 1}),
		created("create with a byte order mark in the name", withName("\xef\xbb\xbfRex"), petstore.NewPet{Name: "\ufeffRex", CategoryID: 1}),
		createdAs("create with a charset parameter", "application/json; charset=utf-8", valid, rex),
		createdAs("create with Unicode and a charset parameter", "application/json; charset=utf-8", `{"categoryId":9223372036854775807,"name":"Ünïcødé 🐕"}`,
			petstore.NewPet{Name: "Ünïcødé 🐕", CategoryID: 9223372036854775807}),
		createdAs("create with the media type in capitals", "APPLICATION/JSON", valid, rex),
		createdAs("create with the media type in mixed case, spaces and HTML", "Application/JSON", ` { "name" : "A\"<b>\\" , "categoryId" : 1 } `,
			petstore.NewPet{Name: `A"<b>\`, CategoryID: 1}),

		// Media types.
		unsupported("text/plain", contentType("text/plain")),
		unsupported("no Content-Type", contentType()),
		unsupported("application/json-patch+json", contentType("application/json-patch+json")),
		unsupported("application/jsonx", contentType("application/jsonx")),
		unsupported("two Content-Types", contentType("application/json", "application/json")),

		// Sizes over the 64 KiB limit.
		tooLarge("1 MiB name", withName(strings.Repeat("a", 1<<20))),
		tooLarge("100k open brackets", strings.Repeat("[", 100_000)),
		tooLarge("valid pet padded with spaces", valid+strings.Repeat(" ", petstore.DefaultMaxBodyBytes)),

		// Documents that are not one JSON object.
		bad("empty body", ""),
		bad("null document", "null"),
		bad("empty array", "[]"),
		bad("array of a pet", `[`+valid+`]`),
		bad("object without members", "{}"),
		bad("two objects", valid+`{"name":"Max","categoryId":1}`),
		bad("trailing word", valid+" x"),
		bad("trailing comma", `{"name":"Rex","categoryId":1,}`),
		bad("opening brace alone", `{`),
		bad("unterminated object", `{"name":"Rex","categoryId":1`),
		bad("comment", `{"name":"Rex",/* x */"categoryId":1}`),
		bad("single quotes", `{'name':'Rex','categoryId':1}`),
		bad("NUL after the object", valid+"\x00"),
		bad("byte order mark before the object", "\xef\xbb\xbf"+valid),
		bad("60k open brackets", strings.Repeat("[", 60_000)),
		bad("10k nested objects", strings.Repeat(`{"a":`, 10_000)+"1"+strings.Repeat("}", 10_000)),
		bad("name nested in 20k arrays", `{"name":`+strings.Repeat("[", 20_000)+`"x"`+strings.Repeat("]", 20_000)+`,"categoryId":1}`),

		// Members.
		bad("name missing", `{"categoryId":1}`),
		bad("categoryId missing", `{"name":"Rex"}`),
		bad("name null", `{"name":null,"categoryId":1}`),
		bad("categoryId null", `{"name":"Rex","categoryId":null}`),
		bad("status null", `{"name":"Rex","categoryId":1,"status":null}`),
		bad("unknown member", `{"name":"Rex","categoryId":1,"color":"red"}`),
		bad("member name in another case", `{"Name":"Rex","categoryId":1}`),
		bad("id sent", `{"id":5,"name":"Rex","categoryId":1}`),
		bad("duplicate name before categoryId", `{"name":"Rex","name":"Max","categoryId":1}`),
		bad("duplicate name after categoryId", `{"name":"Rex","categoryId":1,"name":"Max"}`),
		bad("duplicate categoryId", `{"name":"Rex","categoryId":1,"categoryId":2}`),

		// Numbers.
		bad("categoryId a string", `{"name":"Rex","categoryId":"1"}`),
		bad("categoryId 1.0", `{"name":"Rex","categoryId":1.0}`),
		bad("categoryId 1.5", `{"name":"Rex","categoryId":1.5}`),
		bad("categoryId with exponent", `{"name":"Rex","categoryId":1e2}`),
		bad("categoryId with huge exponent", `{"name":"Rex","categoryId":1e400}`),
		bad("categoryId of 20 digits", `{"name":"Rex","categoryId":99999999999999999999}`),
		bad("categoryId over int64", `{"name":"Rex","categoryId":9223372036854775808}`),
		bad("categoryId minus zero", `{"name":"Rex","categoryId":-0}`),
		bad("categoryId with leading zero", `{"name":"Rex","categoryId":01}`),
		bad("categoryId NaN", `{"name":"Rex","categoryId":NaN}`),
		bad("categoryId 0", `{"name":"Rex","categoryId":0}`),
		bad("categoryId negative", `{"name":"Rex","categoryId":-3}`),

		// Names.
		bad("name 7", `{"name":7,"categoryId":1}`),
		bad("name 1", `{"name":1,"categoryId":1}`),
		bad("name empty", withName("")),
		bad("name of spaces", withName("   ")),
		bad("name of spaces and a tab", withName(`  \t `)),
		bad("name a no-break space", withName(`\u00a0`)),
		bad("name a no-break space and a space", withName(`\u00a0 `)),
		bad("name of 257 two-byte characters", withName(strings.Repeat("é", petstore.MaxNameLength+1))),
		bad("name of 257 characters", withName(strings.Repeat("a", petstore.MaxNameLength+1))),
		bad("name not UTF-8", withName("R\xffex")),
		bad("name with a lone surrogate", withName(`R\ud800ex`)),
		bad("name with a raw NUL", withName("R\x00ex")),
		bad("name with an escaped NUL", withName(`R\u0000ex`)),
		bad("name with an escaped bell", withName(`R\u0007ex`)),
		bad("name ending in an escaped bell", withName(`a\u0007`)),
		bad("name with an escaped DEL", withName(`R\u007fex`)),
		bad("name with an escaped C1 control", withName(`R\u0085ex`)),
		bad("name with a raw newline", withName("R\nex")),
		bad("name with an escaped newline", withName(`R\nex`)),

		// The status member.
		bad("status a number", `{"name":"Rex","categoryId":1,"status":1}`),
		bad("status unknown", `{"name":"Rex","categoryId":1,"status":"lost"}`),
		bad("status empty", `{"name":"Rex","categoryId":1,"status":""}`),
		bad("status in capitals", `{"name":"Rex","categoryId":1,"status":"SOLD"}`),
	}
}

func routeCases() []Case {
	unknown := func(name, method, target string) Case {
		return Case{Name: name, Method: method, Target: target, Status: 404, Code: httpapi.CodeNotFound}
	}
	notAllowed := func(name, method, target, body, allow string) Case {
		return Case{Name: name, Method: method, Target: target, Body: body,
			Status: 405, Code: httpapi.CodeMethodNotAllowed, WantHeader: map[string]string{"Allow": allow}}
	}
	noKey := auth()
	return []Case{
		// Exact paths: no cleaning, no redirects.
		unknown("unknown path", "", "/v1/orders"),
		unknown("unknown path, other method", http.MethodDelete, "/v1/orders"),
		unknown("below a pet", "", "/v1/pets/1/owner"),
		unknown("other version", "", "/v2/pets"),
		unknown("no base path", "", "/pets"),
		unknown("path in capitals", "", "/V1/PETS"),
		unknown("100k-character path", "", "/v1/"+strings.Repeat("a", 100_000)),
		unknown("trailing slash after pets", "", "/v1/pets/"),
		unknown("trailing slash after a petId", "", "/v1/pets/1/"),
		unknown("double slash before pets", "", "/v1//pets"),
		unknown("double slash before a petId", "", "/v1/pets//1"),
		unknown("dot-dot segment", "", "/v1/pets/../pets"),
		unknown("encoded slash after pets", "", "/v1/pets%2F1"),

		// Other methods.
		notAllowed("DELETE pets", http.MethodDelete, "/v1/pets", "", allowPets),
		notAllowed("PUT pets", http.MethodPut, "/v1/pets", valid, allowPets),
		notAllowed("OPTIONS pets", http.MethodOptions, "/v1/pets", "", allowPets),
		notAllowed("TRACE pets", http.MethodTrace, "/v1/pets", "", allowPets),
		notAllowed("method in lower case", "get", "/v1/pets", "", allowPets),
		notAllowed("POST pet", http.MethodPost, "/v1/pets/1", valid, allowPet),
		notAllowed("POST pet with an empty object", http.MethodPost, "/v1/pets/1", `{}`, allowPet),
		notAllowed("PUT pet", http.MethodPut, "/v1/pets/1", valid, allowPet),
		notAllowed("PUT pet with an empty object", http.MethodPut, "/v1/pets/1", `{}`, allowPet),
		notAllowed("PATCH pet", http.MethodPatch, "/v1/pets/1", valid, allowPet),
		notAllowed("DELETE pet", http.MethodDelete, "/v1/pets/1", "", allowPet),
		notAllowed("OPTIONS pet", http.MethodOptions, "/v1/pets/1", "", allowPet),

		// The OpenAPI document, served without authentication.
		{Name: "document", Target: "/v1/openapi.json", Header: noKey, Status: 200},
		{Name: "HEAD document", Method: http.MethodHead, Target: "/v1/openapi.json", Header: noKey, Status: 200},
		{Name: "POST document", Method: http.MethodPost, Target: "/v1/openapi.json", Body: `{}`, Header: noKey,
			Status: 405, Code: httpapi.CodeMethodNotAllowed, WantHeader: map[string]string{"Allow": petstore.Allow(petstore.OpenAPIPath)}},
	}
}

// idempotencyCases are the Idempotency-Key headers of a create: a valid key
// creates as without one, a malformed key is refused before the body is
// read.
func idempotencyCases() []Case {
	key := func(values ...string) http.Header {
		return http.Header{"Idempotency-Key": values, "Content-Type": {"application/json"}}
	}
	bad := func(name string, header http.Header) Case {
		return Case{Name: name, Method: http.MethodPost, Target: "/v1/pets", Body: valid, Header: header,
			Status: 400, Code: httpapi.CodeInvalidParameter}
	}
	rex := petstore.NewPet{Name: "Rex", CategoryID: 1}
	longest := strings.Repeat("k", petstore.MaxIdempotencyKeyLength)
	return []Case{
		{Name: "create with an idempotency key", Method: http.MethodPost, Target: "/v1/pets", Body: valid,
			Header: key("8e1b0c52-9f0e-4d4b-a1c4-55a0f1c7d2e1"), Status: 201, Created: &rex},
		{Name: "create with the longest idempotency key", Method: http.MethodPost, Target: "/v1/pets", Body: valid,
			Header: key(longest), Status: 201, Created: &rex},
		{Name: "create with a quoted idempotency key", Method: http.MethodPost, Target: "/v1/pets", Body: valid,
			Header: key(`"a-key"`), Status: 201, Created: &rex},
		bad("empty idempotency key", key("")),
		bad("idempotency key too long", key(longest+"k")),
		bad("idempotency key with a space", key("a key")),
		bad("idempotency key with a tab", key("a\tkey")),
		bad("idempotency key not ASCII", key("clé")),
		bad("two idempotency keys", key("a", "b")),
	}
}
