package httpapi

import (
	"net/http"
	"strconv"
	"time"
)

// The values of the headers that every response carries. They are shared,
// never modified, so setting them costs no allocation.
var (
	jsonContentType = []string{"application/json"}
	noStore         = []string{"no-store"}
	noSniff         = []string{"nosniff"}
)

// SetJSONHeaders sets the headers that every response of the API carries:
// Content-Type: application/json, Cache-Control: no-store and
// X-Content-Type-Options: nosniff.
func SetJSONHeaders(h http.Header) {
	h["Content-Type"] = jsonContentType
	h["Cache-Control"] = noStore
	h["X-Content-Type-Options"] = noSniff
}

// WriteJSON answers r with status and the JSON document body, with the
// headers of SetJSONHeaders and Content-Length. A HEAD request gets the same
// headers and no body.
func WriteJSON(w http.ResponseWriter, r *http.Request, status int, body []byte) {
	h := w.Header()
	SetJSONHeaders(h)
	h["Content-Length"] = []string{strconv.Itoa(len(body))}
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body) // the client has gone away; nothing left to tell it
	}
}

// Header returns a header value that can be assigned to an http.Header entry
// directly, h[key] = v, without an allocation per request. The result must
// not be modified.
func Header(value string) []string { return []string{value} }

// FormatDeprecation formats t for the Deprecation header of RFC 9745: an
// at sign and the Unix time in seconds, for example "@1767225600".
func FormatDeprecation(t time.Time) string {
	return "@" + strconv.FormatInt(t.Unix(), 10)
}

// FormatSunset formats t for the Sunset header of RFC 8594, an HTTP date
// such as "Thu, 05 Dec 2030 00:00:00 GMT".
func FormatSunset(t time.Time) string {
	return t.UTC().Format(http.TimeFormat)
}
