package petstoretest

import "testing"

// TestStoreCaseNeeds checks that each case needs only cases that run
// before it, so that TestStore knows whether they failed.
func TestStoreCaseNeeds(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range storeCases {
		for _, need := range c.needs {
			if !seen[need] {
				t.Errorf("case %s needs %q, which is not a case that runs before it", c.name, need)
			}
		}
		if seen[c.name] {
			t.Errorf("two cases are named %s", c.name)
		}
		seen[c.name] = true
	}
}
