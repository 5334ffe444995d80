// Package petstoretest checks implementations of petstore.Store and servers
// of the animal store API, the way testing/fstest checks an fs.FS.
//
// TestStore checks a Store against each clause of the contract in the doc
// comment of petstore.Store, one subtest per clause, each on a new, empty
// store. A failure names the clause and its sentence and shows a diff
// (-want +got). Typical usage inside a test is:
//
//	func TestConformance(t *testing.T) {
//		petstoretest.TestStore(t, func(t *testing.T) petstore.Store {
//			return mystore.New(t) // a new, empty store
//		})
//	}
//
// TestDurability checks a Store that can be closed and opened again on the
// same data: pets, IDs and idempotency keys survive a reopen, no ID is used
// again, and an Add interrupted by the close stored all or nothing.
//
// TestServer checks a running server of the API through HTTP only, by base
// URL and API key: every answer and header that a client can provoke. It
// creates the pets that it checks, with names unique to the run, so it
// needs no empty store. Typical usage inside a test is:
//
//	srv := httptest.NewServer(handler) // or a deployed server
//	defer srv.Close()
//	petstoretest.TestServer(t, petstoretest.Endpoint{BaseURL: srv.URL + "/v1", APIKey: "key"})
//
// CheckStore and CheckServer are the cores of TestStore and TestServer:
// they return the failed clauses as an error instead of failing a test.
//
// Run the suites with the race detector (go test -race): the clauses about
// concurrent use can only show a missing lock when it is on.
package petstoretest
