package wirecases_test

import (
	"net/http"
	"testing"

	"github.com/petstore-go/petstore/internal/wirecases"
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
