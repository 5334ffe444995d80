package petstore_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/httpapi"
)

// answerOf sends a request to a handler on a seededStore and returns its
// status, Content-Type and strictly decoded error body, checking that the
// store is left as it was.
func answerOf(t *testing.T, method, target, body string, header http.Header) (int, string, httpapi.Error) {
	t.Helper()
	env := newEnv(t)
	before := snapshot(t, env.store)
	w := env.serve(newRequest(t, method, target, body, header))
	checkUnchanged(t, env.store, before)
	if !strings.HasSuffix(w.Body.String(), "}\n") {
		t.Errorf("body %q does not end with a newline", w.Body)
	}
	var e httpapi.Error
	d := json.NewDecoder(w.Body)
	d.DisallowUnknownFields()
	if err := d.Decode(&e); err != nil {
		t.Fatalf("error body: %v", err)
	}
	return w.Code, w.Header().Get("Content-Type"), e
}

// TestReportsEveryProblem: a create's body and a list's query are answered
// with every problem they have, each under its pointer or parameter.
func TestReportsEveryProblem(t *testing.T) {
	blank := httpapi.FieldError{Pointer: "/name", Detail: "name must not be blank"}
	category := httpapi.FieldError{Pointer: "/categoryId", Detail: "categoryId must be 1 or greater"}
	status := httpapi.FieldError{Pointer: "/status", Detail: `status must be "available", "pending" or "sold"; omit it for none`}
	id := httpapi.FieldError{Pointer: "/id", Detail: "id is assigned by the store; remove it from the body"}
	limit := httpapi.FieldError{Parameter: "limit", Detail: "limit must be an integer from 1 to 100"}
	statusParam := httpapi.FieldError{Parameter: "status", Detail: `status must be "available", "pending" or "sold"`}
	cursor := httpapi.FieldError{Parameter: "cursor", Detail: "cursor is not valid; follow the Link header of the previous page"}
	tests := []struct {
		name, body string // a query when it starts with "?"
		want       []httpapi.FieldError
	}{
		{"name blank", `{"name":" ","categoryId":1}`, []httpapi.FieldError{blank}},
		{"name too long", `{"name":"` + strings.Repeat("a", petstore.MaxNameLength+1) + `","categoryId":1}`,
			[]httpapi.FieldError{{Pointer: "/name", Detail: "name is longer than 256 characters; shorten it"}}},
		{"name control", `{"name":"a\u0007","categoryId":1}`,
			[]httpapi.FieldError{{Pointer: "/name", Detail: "name must not contain control characters"}}},
		{"name wrong type", `{"name":["Rex"],"categoryId":1}`,
			[]httpapi.FieldError{{Pointer: "/name", Detail: "name must be a string: expected a string"}}},
		{"name null", `{"name":null,"categoryId":1}`,
			[]httpapi.FieldError{{Pointer: "/name", Detail: "name is null; it must be a string"}}},
		{"name missing", `{"categoryId":1}`, []httpapi.FieldError{{Pointer: "/name", Detail: "name is required"}}},
		{"categoryId zero", `{"name":"Rex","categoryId":0}`, []httpapi.FieldError{category}},
		{"categoryId fraction", `{"name":"Rex","categoryId":1.5}`,
			[]httpapi.FieldError{{Pointer: "/categoryId", Detail: "categoryId must be an integer: expected an integer without fraction or exponent"}}},
		{"categoryId missing", `{"name":"Rex"}`, []httpapi.FieldError{{Pointer: "/categoryId", Detail: "categoryId is required"}}},
		{"status", `{"name":"Rex","categoryId":1,"status":"lost"}`, []httpapi.FieldError{status}},
		{"id", `{"id":7,"name":"Rex","categoryId":1}`, []httpapi.FieldError{id}},
		{"unknown", `{"name":"Rex","categoryId":1,"colour":{"a":[1,2]},"a/b~c":true}`, []httpapi.FieldError{
			{Pointer: "/colour", Detail: `unknown member "colour"; a pet has name, categoryId and status`},
			{Pointer: "/a~1b~0c", Detail: `unknown member "a/b~c"; a pet has name, categoryId and status`}}},
		{"name twice", `{"name":"Rex","name":"Max","categoryId":1}`,
			[]httpapi.FieldError{{Pointer: "/name", Detail: "name is given more than once; give it once"}}},
		// Every field wrong at once, in another order than the answer's.
		{"all", `{"colour":"red","status":"lost","id":7,"categoryId":0,"name":""}`, []httpapi.FieldError{blank, category, status, id,
			{Pointer: "/colour", Detail: `unknown member "colour"; a pet has name, categoryId and status`}}},
		{"all missing", `{}`, []httpapi.FieldError{{Pointer: "/name", Detail: "name is required"},
			{Pointer: "/categoryId", Detail: "categoryId is required"}}},
		{"limit", "?limit=0", []httpapi.FieldError{limit}},
		{"status param", "?status=lost", []httpapi.FieldError{statusParam}},
		{"cursor", "?cursor=!", []httpapi.FieldError{cursor}},
		{"every parameter", "?cursor=!&status=lost&limit=x", []httpapi.FieldError{limit, statusParam, cursor}},
		{"limit twice", "?limit=5&limit=6&status=sold",
			[]httpapi.FieldError{{Parameter: "limit", Detail: "limit is given more than once; give it once"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			method, target, body, code, title := http.MethodPost, "/v1/pets", tt.body, httpapi.CodeInvalidBody, "Invalid body"
			if strings.HasPrefix(tt.body, "?") {
				method, target, body, code, title = http.MethodGet, "/v1/pets"+tt.body, "", httpapi.CodeInvalidParameter, "Invalid parameter"
			}
			status, contentType, got := answerOf(t, method, target, body, nil)
			details := make([]string, len(tt.want))
			for i, f := range tt.want {
				details[i] = f.Detail
			}
			want := httpapi.Error{Code: code, Message: strings.Join(details, "; "), Status: 400,
				Type: code.Type(), Title: title, Errors: tt.want}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if status != 400 || contentType != "application/json" {
				t.Errorf("status %d, Content-Type %q, want 400 application/json", status, contentType)
			}
		})
	}
}

func TestCreateThatIsNotAnObjectIsOneProblem(t *testing.T) {
	for _, body := range []string{`[]`, `{"name":"Rex",`, `{"name":"Rex","categoryId":1}x`, `{"name":"Rex","categoryId":01}`} {
		_, _, got := answerOf(t, http.MethodPost, "/v1/pets", body, nil)
		if got.Code != httpapi.CodeInvalidBody || got.Errors != nil || !strings.HasPrefix(got.Message, "the body is not valid") {
			t.Errorf("%s: %+v, want one invalid_body without errors", body, got)
		}
	}
}

func TestCreateCapsItsProblems(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"name":"Rex","categoryId":1`)
	for i := range 100 {
		b.WriteString(`,"m` + strings.Repeat("x", i) + `":1`)
	}
	b.WriteString(`}`)
	_, _, got := answerOf(t, http.MethodPost, "/v1/pets", b.String(), nil)
	if len(got.Errors) != 16 || got.Errors[0].Pointer != "/m" {
		t.Errorf("%d errors, the first %+v; want the first 16", len(got.Errors), got.Errors[0])
	}
}

func TestProblemJSONWhenAskedFor(t *testing.T) {
	tests := []struct {
		accept, want string
	}{
		{"", "application/json"},
		{"application/json", "application/json"},
		{"*/*", "application/json"},
		{"application/problem+json", "application/problem+json"},
		{"application/json;q=0.5, application/problem+json", "application/problem+json"},
	}
	for _, tt := range tests {
		header := http.Header{}
		if tt.accept != "" {
			header.Set("Accept", tt.accept)
		}
		for _, target := range []string{"/v1/pets/99", "/v1/pets?limit=0"} {
			_, contentType, got := answerOf(t, http.MethodGet, target, "", header)
			if contentType != tt.want || got.Type == "" || got.Title == "" {
				t.Errorf("Accept %q, %s: Content-Type %q, type %q, title %q; want %s with a type and title", tt.accept, target, contentType, got.Type, got.Title, tt.want)
			}
		}
	}
}
