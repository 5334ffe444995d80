// Package respond writes the responses of the API: a JSON body with the
// headers that every response carries.
package respond

import (
	"net/http"
	"strconv"
)

// The values of the headers that the responses carry. They are shared,
// never modified, so setting them costs no allocation.
var (
	jsonContentType   = []string{"application/json"}
	noStore           = []string{"no-store"}
	noSniff           = []string{"nosniff"}
	varyAuthorization = []string{"Authorization"}
)

// JSON answers r with status and the JSON document body, with the headers
// Content-Type: application/json, Cache-Control: no-store,
// X-Content-Type-Options: nosniff and Content-Length. A HEAD request gets the
// same headers and no body.
func JSON(w http.ResponseWriter, r *http.Request, status int, body []byte) {
	write(w, r, status, jsonContentType, body)
}

// Document is JSON with the Content-Type mediaType, such as
// application/problem+json.
func Document(w http.ResponseWriter, r *http.Request, status int, mediaType string, body []byte) {
	ct := jsonContentType
	if mediaType != ct[0] {
		ct = []string{mediaType}
	}
	write(w, r, status, ct, body)
}

func write(w http.ResponseWriter, r *http.Request, status int, contentType []string, body []byte) {
	h := w.Header()
	h["Content-Type"] = contentType
	h["Cache-Control"] = noStore
	h["X-Content-Type-Options"] = noSniff
	h["Content-Length"] = []string{strconv.Itoa(len(body))}
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body) // the client has gone away; nothing left to tell it
	}
}
