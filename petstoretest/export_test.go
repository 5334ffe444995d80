package petstoretest

import (
	"fmt"
	"slices"

	"github.com/petstore-go/petstore"
)

// Exported for the tests of the suites themselves, which run in the
// petstoretest_test package.

// CheckStoreClause is CheckStore for the named clause alone.
func CheckStoreClause(newStore func() (petstore.Store, error), name string) error {
	if i := slices.IndexFunc(storeCases, func(c clause[*storeT]) bool { return c.name == name }); i >= 0 {
		return checkStore(newStore, storeCases[i:i+1])
	}
	return fmt.Errorf("no clause of TestStore is named %q", name)
}

// CheckDurability is the core of TestDurability, with open opening a new
// set of data that newData makes; name, when not "", runs that clause
// alone.
func CheckDurability(newData func() func() (petstore.Store, func() error), name string) error {
	cases := slices.DeleteFunc(slices.Clone(durabilityCases), func(c clause[*durableT]) bool {
		return name != "" && c.name != name
	})
	return checkClauses(cases, func(r reporter, c clause[*durableT]) { runDurable(r, newData(), c.test) })
}

// HeadersRule is the rule about the headers of every response.
const HeadersRule = headersClause
