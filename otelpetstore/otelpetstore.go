package otelpetstore

import (
	"cmp"
	"errors"
	"fmt"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/semconv/v1.43.0/httpconv"
	"go.opentelemetry.io/otel/trace"

	"github.com/petstore-go/petstore/internal/options"
)

// ScopeName is the instrumentation scope of the tracer and the meter that
// New asks the providers for.
const ScopeName = "github.com/petstore-go/petstore/otelpetstore"

// The metrics that a Telemetry records, besides the semantic conventions'
// http.server.request.duration.
const (
	// DeprecatedRequestsName is the name of the counter of requests for a
	// deprecated operation by an authenticated caller, with the attributes
	// PrincipalKey and OperationKey.
	DeprecatedRequestsName = "petstore.deprecated.requests"

	// PrincipalKey is the attribute that names the caller (see
	// petstore.Principal) on the DeprecatedRequestsName counter.
	PrincipalKey = "petstore.principal"

	// OperationKey is the attribute that names the operation (such as
	// getPet) on the DeprecatedRequestsName counter.
	OperationKey = "petstore.operation"

	// WatchStreamsName is the name of the up-down counter of the watch
	// streams open (see ObserveWatch).
	WatchStreamsName = "petstore.watch.streams"

	// WatchEventsName is the name of the counter of the events sent on
	// watch streams (see ObserveWatch).
	WatchEventsName = "petstore.watch.events"
)

// Telemetry records OpenTelemetry traces and metrics of a petstore handler:
// Middleware starts a server span for each request, and Observe, passed to
// petstore.WithObserver, names the span by operation and records the
// metrics. A Telemetry is safe for concurrent use, and one may serve any
// number of handlers. Make one with New: the zero Telemetry is not usable.
type Telemetry struct {
	tracer     trace.Tracer
	propagator propagation.TextMapPropagator
	duration   metric.Float64Histogram
	deprecated metric.Int64Counter
	streams    metric.Int64UpDownCounter
	events     metric.Int64Counter

	durationSets   optionCache[durationKey, []metric.RecordOption]
	deprecatedSets optionCache[[2]string, []metric.AddOption] // by principal and operation
}

// New returns a Telemetry that records on the configured providers. It
// reports every configuration mistake as an error that names the option
// that fixes it.
func New(opts ...Option) (*Telemetry, error) {
	c := config{}
	if err := options.Apply(&c, opts, Option.apply); err != nil {
		return nil, fmt.Errorf("otelpetstore.New: %w", err)
	}
	meter := cmp.Or(c.meterProvider, otel.GetMeterProvider()).Meter(ScopeName, metric.WithSchemaURL(semconv.SchemaURL))
	duration, err1 := httpconv.NewServerRequestDuration(meter)
	deprecated, err2 := meter.Int64Counter(DeprecatedRequestsName,
		metric.WithDescription("Requests for a deprecated operation by an authenticated caller."),
		metric.WithUnit("{request}"))
	streams, err3 := meter.Int64UpDownCounter(WatchStreamsName,
		metric.WithDescription("Watch streams open."), metric.WithUnit("{stream}"))
	events, err4 := meter.Int64Counter(WatchEventsName,
		metric.WithDescription("Events sent on watch streams, one per pet."), metric.WithUnit("{event}"))
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		return nil, fmt.Errorf("otelpetstore.New: the meter provider refused an instrument: %w; "+
			"check the views of the provider given by WithMeterProvider", err)
	}
	return &Telemetry{
		tracer:     cmp.Or(c.tracerProvider, otel.GetTracerProvider()).Tracer(ScopeName, trace.WithSchemaURL(semconv.SchemaURL)),
		propagator: cmp.Or(c.propagator, otel.GetTextMapPropagator()),
		duration:   duration.Inst(),
		deprecated: deprecated,
		streams:    streams,
		events:     events,
	}, nil
}

// An Option configures New.
type Option interface {
	apply(*config) error
}

type optionFunc func(*config) error

func (f optionFunc) apply(c *config) error { return f(c) }

type config struct {
	meterProvider  metric.MeterProvider
	tracerProvider trace.TracerProvider
	propagator     propagation.TextMapPropagator
}

// WithMeterProvider sets the provider of the meter that records the
// metrics. The default is the global one, otel.GetMeterProvider(), which
// records nothing until the host sets one with otel.SetMeterProvider.
func WithMeterProvider(p metric.MeterProvider) Option {
	return nonNil(p, func(c *config) { c.meterProvider = p },
		"WithMeterProvider: the provider is nil; pass one, or leave the option out to use otel.GetMeterProvider()")
}

// WithTracerProvider sets the provider of the tracer that starts the
// spans. The default is the global one, otel.GetTracerProvider(), which
// records nothing until the host sets one with otel.SetTracerProvider.
func WithTracerProvider(p trace.TracerProvider) Option {
	return nonNil(p, func(c *config) { c.tracerProvider = p },
		"WithTracerProvider: the provider is nil; pass one, or leave the option out to use otel.GetTracerProvider()")
}

// WithPropagator sets the propagator that extracts the caller's trace
// context (such as a traceparent header) from each request, so that its
// span continues the caller's trace. The default is the global one,
// otel.GetTextMapPropagator(), which extracts nothing until the host sets
// one, such as propagation.TraceContext{}, with otel.SetTextMapPropagator.
func WithPropagator(p propagation.TextMapPropagator) Option {
	return nonNil(p, func(c *config) { c.propagator = p },
		"WithPropagator: the propagator is nil; "+
			"pass one, such as propagation.TraceContext{}, or leave the option out to use otel.GetTextMapPropagator()")
}

// nonNil returns an Option that applies set, or fails with the message
// ifNil when v is nil.
func nonNil[T comparable](v T, set func(*config), ifNil string) Option {
	return optionFunc(func(c *config) error {
		var zero T
		if v == zero {
			return errors.New(ifNil)
		}
		set(c)
		return nil
	})
}
