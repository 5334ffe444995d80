package memstore_test

import (
	"testing"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/memstore"
	"github.com/petstore-go/petstore/petstoretest"
)

// TestStoreConformance runs the Store conformance suite on memstore.
func TestStoreConformance(t *testing.T) {
	petstoretest.TestStore(t, func(*testing.T) petstore.Store { return memstore.New() })
}
