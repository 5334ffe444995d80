package pgstore_test

import (
	"testing"

	"github.com/petstore-go/petstore/internal/testkit/pgtest"
	"github.com/petstore-go/petstore/petstoretest"
)

// TestDurability runs the durability suite on pgstore: each set of data is
// a schema of its own, and each open is a new pool on it, closed by close.
func TestDurability(t *testing.T) {
	admin := pgPool(t)
	petstoretest.TestDurability(t, func(t *testing.T) petstoretest.OpenFunc {
		return pgOpenFunc(pgSchema(t, admin), pgtest.URL(t))
	})
}
