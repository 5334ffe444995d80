package petstore_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/httpapi"
)

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
