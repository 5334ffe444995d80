// Package httpapi is the HTTP and JSON plumbing of the petstore API, free of
// anything about pets: the error body and its stable codes, response headers,
// bounded and strict JSON request bodies, bearer-token parsing and the 401
// challenge, method tables with 405 and HEAD, and the deprecation headers.
//
// It imports only the standard library. A host that mounts the petstore
// handler can use it to answer its own routes in the same error format:
//
//	httpapi.WriteError(w, r, httpapi.CodeNotFound, "no such order; list orders at /store/orders")
package httpapi
