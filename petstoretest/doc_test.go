package petstoretest_test

import (
	"net/http/httptest"
	"testing"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/memstore"
	"github.com/petstore-go/petstore/petstoretest"
)

// TestServerDocExample runs the package doc's use of TestServer as it
// stands, with the API key "key", a word that the API's own text uses too.
func TestServerDocExample(t *testing.T) {
	handler, err := petstore.New(petstore.WithStore(memstore.New()), petstore.WithAuthenticator(petstore.APIKeys("key")))
	if err != nil {
		t.Fatal(err)
	}

	srv := httptest.NewServer(handler) // or a deployed server
	defer srv.Close()
	petstoretest.TestServer(t, petstoretest.Endpoint{BaseURL: srv.URL + "/v1", APIKey: "key"})
}
