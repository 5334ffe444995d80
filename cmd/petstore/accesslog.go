package main

import (
	"context"
	"log/slog"

	"go.opentelemetry.io/otel/trace"

	"github.com/petstore-go/petstore"
)

// accessLogObserver returns an observer that writes one line per request
// to logger, at level Info: the method (cut to 64 bytes when longer, by the
// handler), the route template (never the path as sent, nor its query),
// the operation, the status, the error code (empty for a success), the
// duration, the caller's principal (empty when the caller was not
// authenticated; a principal names a key without revealing it) and, when
// the request is traced, its trace and span IDs.
func accessLogObserver(logger *slog.Logger) func(context.Context, petstore.Observation) {
	return func(ctx context.Context, o petstore.Observation) {
		attrs := make([]slog.Attr, 0, 9)
		attrs = append(attrs,
			slog.String("method", o.Method),
			slog.String("route", o.Route),
			slog.String("operation", string(o.Operation)),
			slog.Int("status", o.Status),
			slog.String("code", string(o.Code)),
			slog.Duration("duration", o.Duration),
			slog.String("principal", o.Principal),
		)
		if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
			attrs = append(attrs, slog.String("trace_id", sc.TraceID().String()), slog.String("span_id", sc.SpanID().String()))
		}
		logger.LogAttrs(ctx, slog.LevelInfo, "petstore: request", attrs...)
	}
}
