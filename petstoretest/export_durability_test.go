package petstoretest

// DurabilityCases returns the names of TestDurability's subtests and the
// clause that each enforces.
func DurabilityCases() (names []string, clauses map[string]string) {
	clauses = map[string]string{}
	for _, c := range durabilityCases {
		names = append(names, c.name)
		clauses[c.name] = c.clause
	}
	return names, clauses
}
