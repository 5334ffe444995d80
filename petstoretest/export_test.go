package petstoretest

import (
	"context"
	"fmt"

	"github.com/petstore-go/petstore"
)

// Exported for the tests of the suites themselves, which run in the
// petstoretest_test package.

// CheckStoreClause is CheckStore for the named clause alone.
func CheckStoreClause(newStore func() (petstore.Store, error), name string) error {
	for _, c := range storeCases {
		if c.name == name {
			s, err := newStore()
			if err != nil {
				return err
			}
			return c.check(context.Background(), s, "")
		}
	}
	return fmt.Errorf("no clause of TestStore is named %q", name)
}

// CheckDurability is the core of TestDurability, with open opening a new
// set of data that newData makes.
func CheckDurability(newData func() func() (petstore.Store, func() error)) error {
	return runClauses(nil, durabilityCases, durabilityCase.info, func(c durabilityCase, failedNeed string) error {
		return c.check(context.Background(), newData(), failedNeed)
	})
}

// CheckDurabilityClause is CheckDurability for the named clause alone.
func CheckDurabilityClause(newData func() func() (petstore.Store, func() error), name string) error {
	for _, c := range durabilityCases {
		if c.name == name {
			return c.check(context.Background(), newData(), "")
		}
	}
	return fmt.Errorf("no clause of TestDurability is named %q", name)
}

// HeadersRule is the rule about the headers of every response.
const HeadersRule = headersClause
