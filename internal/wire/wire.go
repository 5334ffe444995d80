// Package wire holds the API's wire facts that the handler shares with the
// client and the project's harnesses: the route table as data and the
// cursor of a page.
package wire

import (
	"net/http"
	"strconv"
	"strings"
)

// OpenAPIPath is the path, under the base path, at which the handler serves
// its OpenAPI document: "/v1/openapi.json" by default.
const OpenAPIPath = "/openapi.json"

// DocsPath is the path, under the base path, of the interactive
// documentation page that WithDocs turns on; the page's own files are
// served below it, as in "/v1/docs/swagger-ui.css".
const DocsPath = "/docs"

// A Route is one operation of the API as the handler routes it.
type Route struct {
	// Method is the request method that reaches the operation. A GET route
	// also answers HEAD, without a body.
	Method string
	// Pattern is the path below the base path, with a {name} segment for
	// each path parameter, as in "/pets/{petId}".
	Pattern string
	// Operation names the operation, as the OpenAPI document's operationId
	// does.
	Operation string
	// Deprecated reports whether every answer of the operation carries the
	// Deprecation, Sunset and successor Link headers.
	Deprecated bool
}

// Routes returns the operations of the API in the order of the handler's
// route table. The OpenAPI document and the documentation page, which are
// not operations, are not among them.
func Routes() []Route {
	return []Route{
		{Method: http.MethodGet, Pattern: "/pets", Operation: "listPets"},
		{Method: http.MethodPost, Pattern: "/pets", Operation: "createPet"},
		{Method: http.MethodGet, Pattern: "/pets/{petId}", Operation: "getPet", Deprecated: true},
	}
}

// Allow returns the value of the Allow header with which a handler built
// with the default options answers a method that pattern (a path below the
// base path, such as "/pets" or OpenAPIPath) does not serve: "GET, HEAD,
// POST" for "/pets". It returns "" for a pattern that no route has.
func Allow(pattern string) string {
	var methods []string
	for _, r := range append(Routes(), Route{Method: http.MethodGet, Pattern: OpenAPIPath}) {
		if r.Pattern == pattern {
			methods = append(methods, r.Method)
		}
	}
	return AllowOf(methods)
}

// AllowOf returns the value of an Allow header for methods: each in its
// order, each GET followed by HEAD.
func AllowOf(methods []string) string {
	var allow []string
	for _, m := range methods {
		allow = append(allow, m)
		if m == http.MethodGet {
			allow = append(allow, http.MethodHead)
		}
	}
	return strings.Join(allow, ", ")
}

// AppendCursor appends to dst the value of the cursor parameter of GET /pets
// that selects the pets after the one with ID after: the cursor of the Link
// header of a page that ends with that pet. It is the one definition of the
// cursor (the ID in base 36 today) for the handler and its clients; a client
// otherwise follows Link headers and treats cursors as opaque, and calls it
// only to start a listing after a given ID.
func AppendCursor(dst []byte, after int64) []byte {
	return strconv.AppendInt(dst, after, 36)
}
