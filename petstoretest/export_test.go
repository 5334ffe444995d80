package petstoretest

// Exported for the tests of the suites themselves, which run in the
// petstoretest_test package.

// StoreCases returns the names of TestStore's subtests and the clause that
// each enforces.
func StoreCases() (names []string, clauses map[string]string) {
	clauses = map[string]string{}
	for _, c := range storeCases {
		names = append(names, c.name)
		clauses[c.name] = c.clause
	}
	return names, clauses
}

// ServerCases returns the names of TestServer's subtests and the rule that
// each enforces.
func ServerCases() (names []string, clauses map[string]string) {
	clauses = map[string]string{}
	for _, c := range serverCases {
		names = append(names, c.name)
		clauses[c.name] = c.clause
	}
	return names, clauses
}

// HeadersClause is the rule about the headers of every response.
const HeadersClause = headersClause
