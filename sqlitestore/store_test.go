package sqlitestore_test

import (
	"testing"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/petstoretest"
)

// TestStore runs the conformance suite, each subtest on a new file.
func TestStore(t *testing.T) {
	petstoretest.TestStore(t, func(t *testing.T) petstore.Store {
		return open(t, newPath(t))
	})
}
