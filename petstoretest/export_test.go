package petstoretest

import (
	"errors"
	"fmt"

	"github.com/petstore-go/petstore"
)

// Exported for the tests of the suites themselves, which run in the
// petstoretest_test package.

// CheckStoreClause is CheckStore for the named clause alone.
func CheckStoreClause(newStore func() (petstore.Store, error), name string) error {
	for _, c := range storeCases {
		if c.name == name {
			return checkClause(c.name, c.sentence, func(r reporter) {
				s, err := newStore()
				if err != nil {
					r.Fatalf("newStore: %v", err)
				}
				runStore(r, s, c.test)
			})
		}
	}
	return fmt.Errorf("no clause of TestStore is named %q", name)
}

// CheckDurability is the core of TestDurability, with open opening a new
// set of data that newData makes; name, when not "", runs that clause
// alone.
func CheckDurability(newData func() func() (petstore.Store, func() error), name string) error {
	var errs []error
	for _, c := range durabilityCases {
		if name == "" || c.name == name {
			errs = append(errs, checkClause(c.name, c.sentence, func(r reporter) { runDurable(r, newData(), c.test) }))
		}
	}
	return errors.Join(errs...)
}

// HeadersRule is the rule about the headers of every response.
const HeadersRule = headersClause
