package petstoretest

import "testing"

// TestDurabilityCaseNeeds checks that each case of TestDurability needs
// only cases that run before it, so that TestDurability knows whether they
// failed.
func TestDurabilityCaseNeeds(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range durabilityCases {
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
