package docspage_test

import (
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/docspage"
	"github.com/petstore-go/petstore/memstore"
)

// A host serves Swagger UI's page at {base}/docs by passing its files to
// WithDocs.
func Example() {
	h, err := petstore.New(
		petstore.WithStore(memstore.New()),
		petstore.WithAuthenticator(petstore.APIKeys("key")),
		petstore.WithDocs(docspage.Files()),
	)
	if err != nil {
		log.Fatal(err)
	}
	for _, path := range []string{"/v1/docs", "/v1/docs/swagger-ui-bundle.js"} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
		fmt.Println(path, w.Code, w.Header().Get("Content-Type"))
	}
	// Output:
	// /v1/docs 200 text/html; charset=utf-8
	// /v1/docs/swagger-ui-bundle.js 200 text/javascript; charset=utf-8
}
