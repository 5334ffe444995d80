package wirecases_test

import (
	"net/http"
	"testing"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/httpapi"
	"github.com/petstore-go/petstore/internal/testkit/wirecases"
)

// TestCasesAreWellFormed checks the table itself: names are unique, every
// target is one that a server hands to a handler, an error has a code and a
// success none, and every success says what it answers, but for the
// document, whose body TestOpenAPIServed checks.
func TestCasesAreWellFormed(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range wirecases.Cases() {
		if seen[c.Name] {
			t.Errorf("two cases are named %q", c.Name)
		}
		seen[c.Name] = true
		if _, err := c.Request(t.Context(), ""); err != nil {
			t.Errorf("%s: %v", c.Name, err)
		}
		if (c.Status >= 400) != (c.Code != "") {
			t.Errorf("%s: status %d with code %q", c.Name, c.Status, c.Code)
		}
		says := c.WantBody != "" || c.Created != nil || c.Method == http.MethodHead || c.Target == "/v1/openapi.json"
		if c.Status < 300 && !says {
			t.Errorf("%s: a success that names neither its body nor the pet it creates", c.Name)
		}
	}
	t.Logf("%d cases", len(seen))
}

// TestCheckCatchesWrongAnswers gives Check a right answer, and that answer
// broken one way at a time, which it must reject.
func TestCheckCatchesWrongAnswers(t *testing.T) {
	type answer struct {
		status int
		header http.Header
		body   string
	}
	jsonHeader := func(extra ...string) http.Header {
		h := http.Header{"Content-Type": {"application/json"}, "Cache-Control": {"no-store"}, "X-Content-Type-Options": {"nosniff"}}
		for i := 0; i+1 < len(extra); i += 2 {
			h.Add(extra[i], extra[i+1])
		}
		return h
	}
	rex := petstore.NewPet{Name: "Rex", CategoryID: 1}
	unauthorized := wirecases.Case{Name: "no Authorization", Status: 401, Code: httpapi.CodeUnauthorized,
		WantHeader: map[string]string{"WWW-Authenticate": `Bearer realm="petstore"`}}
	created := wirecases.Case{Name: "create", Method: http.MethodPost, Status: 201, Created: &rex}
	lastPage := wirecases.Case{Name: "last page", Status: 200, WantBody: "[]", WantHeader: map[string]string{"Link": ""}}
	challenge := []string{"Www-Authenticate", `Bearer realm="petstore"`}
	// An answer without a body, such as a delete's, has no Content-Type.
	noContent := wirecases.Case{Name: "delete", Method: http.MethodDelete, Target: "/v1/pets/1", Status: 204}
	noBody := http.Header{"Cache-Control": {"no-store"}, "X-Content-Type-Options": {"nosniff"}}
	errBody := `{"code":"unauthorized","message":"no key","status":401}`
	tests := []struct {
		name string
		c    wirecases.Case
		a    answer
		ok   bool
	}{
		{"right error", unauthorized, answer{401, jsonHeader(challenge...), errBody}, true},
		{"right create", created, answer{201, jsonHeader("Location", "pets/31"), `{"id":31,"name":"Rex","categoryId":1}`}, true},
		{"other status", unauthorized, answer{403, jsonHeader(challenge...), `{"code":"forbidden","message":"no","status":403}`}, false},
		{"no nosniff", unauthorized, answer{401, http.Header{"Content-Type": {"application/json"}, "Cache-Control": {"no-store"}, "Www-Authenticate": challenge[1:]}, errBody}, false},
		{"two Content-Types", unauthorized, answer{401, jsonHeader(append(challenge, "Content-Type", "application/json")...), errBody}, false},
		{"no challenge", unauthorized, answer{401, jsonHeader(), errBody}, false},
		{"other challenge", unauthorized, answer{401, jsonHeader("Www-Authenticate", "Basic"), errBody}, false},
		{"header it must not carry", unauthorized, answer{401, jsonHeader(append(challenge, "Retry-After", "1")...), errBody}, false},
		{"status member differs", unauthorized, answer{401, jsonHeader(challenge...), `{"code":"unauthorized","message":"no key","status":400}`}, false},
		{"code of another status", unauthorized, answer{401, jsonHeader(challenge...), `{"code":"not_found","message":"no key","status":401}`}, false},
		{"undocumented code", unauthorized, answer{401, jsonHeader(challenge...), `{"code":"denied","message":"no key","status":401}`}, false},
		{"extra member", unauthorized, answer{401, jsonHeader(challenge...), `{"code":"unauthorized","message":"no key","status":401,"key":"k"}`}, false},
		{"no message", unauthorized, answer{401, jsonHeader(challenge...), `{"code":"unauthorized","message":"","status":401}`}, false},
		{"create without Location", created, answer{201, jsonHeader(), `{"id":31,"name":"Rex","categoryId":1}`}, false},
		{"create with another id", created, answer{201, jsonHeader("Location", "pets/31"), `{"id":32,"name":"Rex","categoryId":1}`}, false},
		{"right last page", lastPage, answer{200, jsonHeader(), "[]"}, true},
		{"last page with a next Link", lastPage, answer{200, jsonHeader("Link", `<?cursor=u>; rel="next"`), "[]"}, false},
		{"last page with another body", lastPage, answer{200, jsonHeader(), "[ ]"}, false},
		{"create that is not JSON", created, answer{201, jsonHeader("Location", "pets/31"), `{"id":31`}, false},
		{"204 without a body", noContent, answer{204, noBody, ""}, true},
		{"204 with a Content-Type", noContent, answer{204, jsonHeader(), ""}, false},
		{"204 with a body", noContent, answer{204, noBody, "{}"}, false},
		{"200 without a Content-Type", lastPage, answer{200, noBody, "[]"}, false},
	}
	for _, tt := range tests {
		err := tt.c.Check(tt.a.status, tt.a.header, []byte(tt.a.body))
		if (err == nil) != tt.ok {
			t.Errorf("%s: Check = %v, want an error: %v", tt.name, err, !tt.ok)
		}
	}
}
