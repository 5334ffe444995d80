package pgstore_test

import (
	"testing"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/petstoretest"
)

// TestStore runs the conformance suite, each subtest on a table of its own
// in a fresh schema.
func TestStore(t *testing.T) {
	pool := pgPool(t)
	petstoretest.TestStore(t, func(t *testing.T) petstore.Store {
		return pgStore(t, pool)
	})
}
