package main

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/petstore-go/petstore"
)

// publicWriteTimeout is how long an answer served without a key (the
// OpenAPI document, the docs page and its assets) may take to leave in all;
// the API's answers have -write-timeout.
const publicWriteTimeout = 10 * time.Second

// front is the server's handler in front of the API handler. It applies
// the limits that need the request but not the API:
//   - over HTTP/2, a request head over maxHead is answered 431 (net/http
//     refuses one over HTTP/1.1 itself);
//   - an answer served without a key must leave within publicWriteTimeout;
//   - a request body takes a place in the bodyGate and must arrive at
//     minBodyRate (see gatedBody);
//   - a 401 closes its connection, so that a caller without a valid key
//     cannot keep one, and the rest of a body that the API left unread has
//     unreadGrace to come, or its connection is closed.
//
// The per-caller budgets and the bound on each caller's requests in flight
// are the API handler's (petstore.WithRateLimit), which answers, observes
// and logs them as it does every other error.
type front struct {
	api      http.Handler
	base     string
	who      callers
	bodies   *bodyGate
	bodyWait time.Duration // -body-timeout
}

func (f *front) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.ProtoMajor >= 2 && headSize(r) > maxHead {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusRequestHeaderFieldsTooLarge)
		fmt.Fprint(w, "431 Request Header Fields Too Large")
		return
	}
	if f.public(r.URL.Path) {
		_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(publicWriteTimeout))
	}
	fw := &frontWriter{ResponseWriter: w}
	if r.ContentLength != 0 {
		c, _ := r.Context().Value(connBodiesKey{}).(*connBodies)
		if c == nil { // a connection that ConnContext did not see
			c = &connBodies{}
		}
		b := &gatedBody{ReadCloser: r.Body, gate: f.bodies, conn: c, caller: f.who.of(r), ctx: r.Context(),
			w: w, timeout: f.bodyWait, now: time.Now}
		r.Body = b
		defer b.finish()
	}
	f.api.ServeHTTP(fw, r)
}

// public reports whether path is served without a key.
func (f *front) public(path string) bool {
	rest, ok := strings.CutPrefix(path, f.base)
	return ok && (rest == petstore.OpenAPIPath || rest == petstore.DocsPath || strings.HasPrefix(rest, petstore.DocsPath+"/"))
}

// frontWriter is front's ResponseWriter: it adds Connection: close to a
// 401 (over HTTP/2, net/http sends a GOAWAY for it). Unwrap keeps
// http.ResponseController working through it.
type frontWriter struct {
	http.ResponseWriter
	wroteHeader bool
}

func (w *frontWriter) WriteHeader(code int) {
	if !w.wroteHeader && code == http.StatusUnauthorized {
		w.Header().Set("Connection", "close")
	}
	if code >= 200 {
		w.wroteHeader = true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *frontWriter) Write(b []byte) (int, error) {
	w.wroteHeader = true
	return w.ResponseWriter.Write(b)
}

// Unwrap returns the ResponseWriter underneath, for http.ResponseController.
func (w *frontWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
