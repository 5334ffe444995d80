package contracttest_test

import (
	"net/http/httptest"
	"testing"

	"github.com/go-chi/chi/v5"
	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/memstore"
	"github.com/petstore-go/petstore/petstoretest"
)

// TestMountUnderChi mounts the handler under chi as the README's recipe
// does, and runs the conformance suite through the router.
func TestMountUnderChi(t *testing.T) {
	store, auth := memstore.New(), petstore.APIKeys("chi-key")
	api, err := petstore.New(petstore.WithStore(store), petstore.WithAuthenticator(auth),
		petstore.WithBasePath("/api/v1")) // the path as the handler receives it
	if err != nil {
		t.Fatal(err)
	}
	c := chi.NewRouter() // chi: Mount passes r.URL.Path on unchanged
	c.Mount("/api", api)
	c.MethodNotAllowed(api.ServeHTTP) // and methods that chi does not route, such as "get"

	srv := httptest.NewServer(c)
	defer srv.Close()
	petstoretest.TestServer(t, petstoretest.Endpoint{BaseURL: srv.URL + "/api/v1", APIKey: "chi-key"})
}
