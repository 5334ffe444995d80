package otelpetstore

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/httpapi"
)

// Observe records a request that a petstore handler has answered; pass it
// to the handler as petstore.WithObserver(t.Observe). Once it has seen a
// kind of request, recording another costs no allocation of its own.
//
// It records the duration on the http.server.request.duration histogram of
// the semantic conventions, with http.route (none for a path that matches
// no route), http.request.method ("_OTHER" for a method they do not know),
// http.response.status_code, url.scheme (when Middleware served the
// request) and, for a failure, error.type: the petstore error code, or the
// status for a 5xx without one. A request whose client went away has
// status 499 and error.type "client_closed_request". A deprecated operation
// called by an authenticated caller adds one to the DeprecatedRequestsName
// counter, with the principal and the operation.
//
// When Middleware served the request, Observe names its span by the
// operation ("getPet"), or the method and the route ("DELETE /v1/pets")
// for a request of no operation, adds the attributes above, and sets the
// status Error for a 5xx. It leaves any other span in ctx alone.
func (t *Telemetry) Observe(ctx context.Context, o petstore.Observation) {
	sc, _ := ctx.Value(serverSpanKey{}).(serverSpan)
	method, methodName := methodOf(o.Method)
	if t.duration.Enabled(ctx) {
		k := durationKey{route: o.Route, code: o.Code, status: o.Status, method: method.Value.AsString(), scheme: sc.scheme}
		opts := t.durationSets.get(k, func() []metric.RecordOption {
			attrs := append(make([]attribute.KeyValue, 0, 5), method)
			if sc.scheme != "" {
				attrs = append(attrs, semconv.URLScheme(sc.scheme))
			}
			return []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(appendAttrs(attrs, o)...))}
		})
		t.duration.Record(ctx, o.Duration.Seconds(), opts...)
	}
	if o.Deprecated && o.Principal != "" && t.deprecated.Enabled(ctx) {
		opts := t.deprecatedSets.get([2]string{o.Principal, string(o.Operation)}, func() []metric.AddOption {
			return []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(
				attribute.String(PrincipalKey, o.Principal), attribute.String(OperationKey, string(o.Operation))))}
		})
		t.deprecated.Add(ctx, 1, opts...)
	}
	if sc.span == nil || !sc.span.IsRecording() {
		return
	}
	name := string(o.Operation)
	if o.Operation == petstore.OpNone {
		name = methodName
		if o.Route != "" {
			name += " " + o.Route
		}
	}
	sc.span.SetName(name)
	sc.span.SetAttributes(appendAttrs(nil, o)...)
	if o.Status >= 500 || o.Status == 0 {
		sc.span.SetStatus(codes.Error, errorTypeOf(o.Status, o.Code))
	}
}

// appendAttrs appends to attrs the attributes of o that both the span and
// the histogram carry: http.route, http.response.status_code and
// error.type, each when o has one.
func appendAttrs(attrs []attribute.KeyValue, o petstore.Observation) []attribute.KeyValue {
	if o.Route != "" {
		attrs = append(attrs, semconv.HTTPRoute(o.Route))
	}
	if o.Status != 0 {
		attrs = append(attrs, semconv.HTTPResponseStatusCode(o.Status))
	}
	if e := errorTypeOf(o.Status, o.Code); e != "" {
		attrs = append(attrs, semconv.ErrorTypeKey.String(e))
	}
	return attrs
}

// errorTypeOf returns the error.type of a request answered with status and
// code: the code, or the status for a 5xx without one, or "_OTHER" when no
// status was sent (the handler aborted), or "" for a success.
func errorTypeOf(status int, code httpapi.Code) string {
	switch {
	case code != "":
		return string(code)
	case status == 0:
		return semconv.ErrorTypeOther.Value.AsString()
	case status >= 500:
		return strconv.Itoa(status)
	}
	return ""
}

// durationKey tells apart the attribute sets of the duration histogram.
type durationKey struct {
	route  string
	code   httpapi.Code
	status int
	method string // http.request.method
	scheme string
}

// maxCached bounds the number of entries of an optionCache. The histogram
// has a few dozen attribute sets, but principals are as many as the
// Authenticator names.
const maxCached = 1024

// optionCache maps attribute sets to the measurement options that carry
// them, up to maxCached of them.
type optionCache[K comparable, V any] struct {
	m sync.Map
	n atomic.Int32
}

// get returns the value of k, made with newV the first time and kept
// unless the cache is full.
func (c *optionCache[K, V]) get(k K, newV func() V) V {
	if v, ok := c.m.Load(k); ok {
		return v.(V)
	}
	v := newV()
	if c.n.Load() < maxCached {
		if _, loaded := c.m.LoadOrStore(k, v); !loaded {
			c.n.Add(1)
		}
	}
	return v
}

// ObserveWatch records a change in a petstore handler's watch streams;
// pass it as petstore.WithWatch(petstore.Watch{Observe: t.ObserveWatch}).
// It adds o.Streams to the WatchStreamsName counter and o.Events to the
// WatchEventsName counter, without attributes.
func (t *Telemetry) ObserveWatch(ctx context.Context, o petstore.WatchObservation) {
	if o.Streams != 0 {
		t.streams.Add(ctx, int64(o.Streams))
	}
	if o.Events != 0 {
		t.events.Add(ctx, int64(o.Events))
	}
}

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
		method, methodName := methodOf(r.Method)
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		attrs := []attribute.KeyValue{method, semconv.URLScheme(scheme), semconv.URLPath(r.URL.Path)}
		if method == semconv.HTTPRequestMethodOther {
			attrs = append(attrs, semconv.HTTPRequestMethodOriginal(r.Method))
		}
		ctx, span := t.tracer.Start(ctx, methodName, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...))
		defer span.End()
		next.ServeHTTP(w, r.WithContext(context.WithValue(ctx, serverSpanKey{}, serverSpan{span, scheme})))
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

// methodOf returns the http.request.method attribute of the request method
// m and its name in span names: any method the semantic conventions do not
// know becomes "_OTHER", so that a client cannot add attribute values at
// will, and "HTTP" in span names.
func methodOf(m string) (attribute.KeyValue, string) {
	switch m {
	case "GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "CONNECT", "TRACE", "QUERY":
		return semconv.HTTPRequestMethodKey.String(m), m
	}
	return semconv.HTTPRequestMethodOther, "HTTP"
}
