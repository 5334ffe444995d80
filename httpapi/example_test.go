package httpapi_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/petstore-go/petstore/httpapi"
)

// A host's own route answers a request with two mistakes in one error, in
// the shape of the petstore handler's errors.
func ExampleWriteError() {
	order := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		httpapi.WriteError(w, r, httpapi.CodeInvalidBody, "quantity must be 1 or more; petId is required",
			httpapi.FieldError{Pointer: "/quantity", Detail: "quantity must be 1 or more"},
			httpapi.FieldError{Pointer: "/petId", Detail: "petId is required"})
	})
	r := httptest.NewRequest(http.MethodPost, "/store/orders", nil)
	r.Header.Set("Accept", "application/problem+json")
	w := httptest.NewRecorder()
	order.ServeHTTP(w, r)
	fmt.Println(w.Code, w.Header().Get("Content-Type"))
	fmt.Print(w.Body)
	// Output:
	// 400 application/problem+json
	// {"code":"invalid_body","message":"quantity must be 1 or more; petId is required","status":400,"type":"https://github.com/petstore-go/petstore/blob/main/docs/errors.md#invalid_body","title":"Invalid body","errors":[{"pointer":"/quantity","detail":"quantity must be 1 or more"},{"pointer":"/petId","detail":"petId is required"}]}
}
