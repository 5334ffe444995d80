// Package petstoretest implements support for testing implementations of
// petstore.Store and servers of the animal store API, the way testing/fstest
// serves io/fs and testing/slogtest serves log/slog.
//
// TestStore checks a Store against every clause of the contract in the doc
// comment of petstore.Store. Each clause runs as its own subtest on a new,
// empty store, and a failure names the sentence of the contract that the
// store broke, with a diff (-want +got) of what the contract wants and what
// the store did. Typical usage inside a test is:
//
//	func TestConformance(t *testing.T) {
//		petstoretest.TestStore(t, func(t *testing.T) petstore.Store {
//			return mystore.New(t) // a new, empty store
//		})
//	}
//
// TestServer checks a running server of the API from the outside, through
// HTTP only: the handler that petstore.New returns, mounted anywhere, or a
// deployed service. It checks every response and header that the API specification
// and the package's wire decisions define and that a client can provoke:
// authentication and validation failures, creating and getting pets, the
// Location, Link, Deprecation and Sunset headers, pagination, 404, 405, 413,
// 415 and HEAD. It does not assume an empty store: it creates the pets that
// it checks, with names unique to the run, finds them among others and
// leaves them there. Typical usage inside a test is:
//
//	h, err := petstore.New(petstore.WithStore(memstore.New()), petstore.WithAuthenticator(petstore.APIKeys("key")))
//	if err != nil {
//		t.Fatal(err)
//	}
//	srv := httptest.NewServer(h)
//	defer srv.Close()
//	petstoretest.TestServer(t, petstoretest.Endpoint{BaseURL: srv.URL + "/v1", APIKey: "key"})
//
// A server with another body limit than the default says so in
// Endpoint.MaxBodyBytes.
//
// Run both suites with the race detector (go test -race): the clauses about
// concurrent use can only show a missing lock when it is on.
package petstoretest
