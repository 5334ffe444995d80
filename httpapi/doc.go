// Package httpapi is what a host needs to answer its own routes the way the
// petstore handler answers its: the error body with its stable codes and
// their statuses, and the bearer token of a request.
//
// It imports only the standard library. A host that mounts the petstore
// handler beside routes of its own can answer them in the same format:
//
//	httpapi.WriteError(w, r, httpapi.CodeNotFound, "no such order; list orders at /store/orders")
//
// Errors are problem details (RFC 9457): WriteError adds each code's type and
// title, lists the problems with fields it is given, and answers
// application/problem+json to a client that prefers it.
package httpapi
