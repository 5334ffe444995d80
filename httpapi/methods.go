package httpapi

import (
	"net/http"
	"strings"
)

// Methods is the set of methods that one resource answers. HEAD is allowed
// wherever GET is: it answers as GET without a body.
type Methods struct {
	allow []string // the Allow header value
	list  []string
}

// NewMethods returns the set of the given methods, with HEAD added when GET
// is among them.
func NewMethods(methods ...string) Methods {
	var list []string
	for _, m := range methods {
		list = append(list, m)
		if m == http.MethodGet {
			list = append(list, http.MethodHead)
		}
	}
	return Methods{allow: Header(strings.Join(list, ", ")), list: list}
}

// Allows reports whether method is in the set.
func (m Methods) Allows(method string) bool {
	for _, x := range m.list {
		if x == method {
			return true
		}
	}
	return false
}

// Allow returns the value of the Allow header, for example "GET, HEAD, POST".
func (m Methods) Allow() string { return m.allow[0] }

// WriteNotAllowed answers r with 405 method_not_allowed and the Allow header.
func (m Methods) WriteNotAllowed(w http.ResponseWriter, r *http.Request) {
	w.Header()["Allow"] = m.allow
	WriteError(w, r, CodeMethodNotAllowed, "method "+r.Method+" is not allowed here; use one of "+m.allow[0])
}
