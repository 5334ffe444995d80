package otelpetstore

import (
	"context"
	"net/http"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
)

// Middleware returns a handler that serves each request with next inside a
// server span, a child of the caller's trace context as the propagator
// extracts it (see WithPropagator), ended when next returns, even by a
// panic. The span starts named by the method, with http.request.method,
// url.scheme and url.path; next should be a petstore handler made with
// petstore.WithObserver(t.Observe), which names the span by operation (see
// Observe). A host that wants metrics and no traces leaves Middleware out.
func (t *Telemetry) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := t.propagator.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
		m := methodOf(r.Method)
		sc := &serverSpan{scheme: "http"}
		if r.TLS != nil {
			sc.scheme = "https"
		}
		attrs := []attribute.KeyValue{m.attr, semconv.URLScheme(sc.scheme), semconv.URLPath(r.URL.Path)}
		if !m.known {
			attrs = append(attrs, semconv.HTTPRequestMethodOriginal(r.Method))
		}
		ctx, sc.span = t.tracer.Start(ctx, m.name, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...))
		defer sc.span.End()
		next.ServeHTTP(w, r.WithContext(context.WithValue(ctx, serverSpanKey{}, sc)))
	})
}

// A serverSpan, in the context of a request that Middleware serves under
// serverSpanKey, is the span that Middleware started, so that Observe
// annotates that span and no other, and the scheme, which an Observation
// lacks.
type serverSpan struct {
	span   trace.Span
	scheme string
}

type serverSpanKey struct{}

// method is what the semantic conventions make of a request method.
type method struct {
	attr  attribute.KeyValue // http.request.method, "_OTHER" for a method they do not know
	name  string             // the method, or "HTTP" for one they do not know, as span names have it
	known bool
}

// methods are the request methods that the semantic conventions know,
// with their http.request.method attribute.
var methods = []attribute.KeyValue{
	semconv.HTTPRequestMethodGet, semconv.HTTPRequestMethodHead, semconv.HTTPRequestMethodPost,
	semconv.HTTPRequestMethodPut, semconv.HTTPRequestMethodDelete, semconv.HTTPRequestMethodPatch,
	semconv.HTTPRequestMethodOptions, semconv.HTTPRequestMethodConnect, semconv.HTTPRequestMethodTrace,
	semconv.HTTPRequestMethodQuery,
}

// methodOf returns what the semantic conventions make of the request method
// m: any method they do not know becomes "_OTHER", so that a client cannot
// add attribute values at will.
func methodOf(m string) method {
	for _, attr := range methods {
		if attr.Value.AsString() == m {
			return method{attr, m, true}
		}
	}
	return method{semconv.HTTPRequestMethodOther, "HTTP", false}
}
