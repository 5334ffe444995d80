package petstore

import (
	"context"
	"net/http"
	"time"

	"github.com/petstore-go/petstore/httpapi"
)

// An Observation describes one request that the handler has answered, for
// metrics, traces and access logs (see WithObserver). It never holds a
// credential.
type Observation struct {
	// Operation is the operation of the route that matched, or OpNone for
	// a request for none (see OpNone).
	Operation Operation
	// Route is the template of the path that matched, such as
	// "/v1/pets/{petId}", also for a method it does not answer (405), or ""
	// for an unknown path. It has a bounded number of values, so metrics
	// may be labelled by it. The handler also sets the request's Pattern to
	// it, as net/http.ServeMux does, for a host's own middleware.
	Route string
	// Method is the request's method, as sent, cut to 64 bytes with a marker
	// and its length when it is longer ("GETGET…[4000 bytes]"), so that a
	// hostile client cannot make a log line as long as its request.
	Method string
	// Status is the HTTP status of the answer.
	Status int
	// Code is the error code of the answer, or "" for a success.
	Code httpapi.Code
	// Duration is how long the handler took to answer.
	Duration time.Duration
	// Principal names the authenticated caller (see Principal): the
	// principal that its Authenticator set or, when it set none, a
	// fingerprint of its token (see Authenticator). It is "" only when the
	// caller was not authenticated.
	Principal string
	// Deprecated reports whether the operation is deprecated (getPet is).
	Deprecated bool
}

// WithObserver sets a function that the handler calls, from the request's
// goroutine, once it has answered a request, with the request's context and
// what it answered; observe must be safe for concurrent use. The default is
// none. otelpetstore gives one that records OpenTelemetry metrics and spans.
func WithObserver(observe func(ctx context.Context, o Observation)) Option {
	return optionFunc(func(c *config) error {
		c.observe = observe
		return nil
	})
}

// observedWriter records the status that the handler writes.
type observedWriter struct {
	http.ResponseWriter
	status int
}

func (w *observedWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *observedWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap returns the ResponseWriter it wraps, for http.ResponseController.
func (w *observedWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
