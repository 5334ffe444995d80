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
// TestDurability checks a Store that can be closed and opened again on the
// same data, a file or a database, for what TestStore cannot see: that pets
// (every field), IDs and idempotency keys survive a reopen, that no ID is
// used again after one, and that an Add cancelled or interrupted by the
// close has stored its pet with its key, or neither. Each clause runs as its
// own subtest on a new, empty set of data that the function given to
// TestDurability makes; the OpenFunc that it returns opens a Store on that
// data and returns the function that closes it. Typical usage inside a test
// is:
//
//	func TestDurability(t *testing.T) {
//		petstoretest.TestDurability(t, func(t *testing.T) petstoretest.OpenFunc {
//			path := filepath.Join(t.TempDir(), "pets.db") // a new, empty set of data
//			return func(t *testing.T) (petstore.Store, func() error) {
//				s, err := mystore.Open(path)
//				if err != nil {
//					t.Fatal(err)
//				}
//				return s, s.Close
//			}
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
// Run the suites with the race detector (go test -race): the clauses about
// concurrent use can only show a missing lock when it is on.
package petstoretest
