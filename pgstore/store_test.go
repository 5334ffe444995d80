package pgstore_test

import (
	"testing"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/internal/testkit/pgtest"
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

// TestDurability runs the durability suite on pgstore: each set of data is
// a schema of its own, and each open is a new pool on it, closed by close.
func TestDurability(t *testing.T) {
	admin := pgPool(t)
	petstoretest.TestDurability(t, func(t *testing.T) petstoretest.OpenFunc {
		return pgOpenFunc(pgSchema(t, admin), pgtest.URL(t))
	})
}
