package client_test

import (
	"testing"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/petstoretest"
)

// TestStore runs the Store conformance suite through the client against the
// handler on memstore: it proves the client, the handler and the store
// together. The client carries the principal of the suite's contexts to the
// server as the API key of that principal (see principalKey).
func TestStore(t *testing.T) {
	petstoretest.TestStore(t, func(t *testing.T) petstore.Store {
		srv, _ := newMemServer(t)
		return newClient(t, srv.base)
	})
}
