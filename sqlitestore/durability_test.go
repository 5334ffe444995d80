package sqlitestore_test

import (
	"testing"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/petstoretest"
	"github.com/petstore-go/petstore/sqlitestore"
)

// TestDurability runs the durability suite: each set of data is a new file,
// and each open is a Store on it, closed by its Close.
func TestDurability(t *testing.T) {
	petstoretest.TestDurability(t, func(t *testing.T) petstoretest.OpenFunc {
		path := newPath(t)
		return func(t *testing.T) (petstore.Store, func() error) {
			s, err := sqlitestore.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			return s, s.Close
		}
	})
}
