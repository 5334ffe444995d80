package petstore_test

import (
	"testing"

	"github.com/petstore-go/petstore/internal/testkit/loadtest"
	"github.com/petstore-go/petstore/memstore"
)

// TestLoadMemstore has 64 concurrent clients make 100,000 creates, mixed
// with lists and gets, through a real server on loopback, then checks that
// every acknowledged pet is stored exactly once with the fields it was
// created with, and nothing else is. PETSTORE_LOAD_CREATES changes the
// number of creates.
func TestLoadMemstore(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping the 100,000-create load test in -short mode; run go test without -short for it")
	}
	loadtest.TestStore(t, "memstore", memstore.New())
}
