package petstoretest

import (
	"strings"
	"testing"
)

// A clause that stops with FailNow, having reported nothing, fails under
// the Check functions as it does under testing.T.
func TestFailNowFailsTheClause(t *testing.T) {
	cases := []clause[int]{{name: "stops", sentence: "it stops"}, {name: "passes", sentence: "it passes"}}
	err := checkClauses(cases, func(r reporter, c clause[int]) {
		if c.name == "stops" {
			r.FailNow()
		}
	})
	if err == nil || !strings.Contains(err.Error(), `clause "stops" failed`) || strings.Contains(err.Error(), `"passes"`) {
		t.Errorf("checkClauses = %v; want the clause that called FailNow alone failed", err)
	}
}
