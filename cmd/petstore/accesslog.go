package main

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/petstore-go/petstore"
)

// The access log's budget for client errors: a connection may have
// accessLogBurst answers from 400 to 499 logged line by line in each
// accessLogWindow; the rest of the window's are counted, and logged as one
// line when the window ends.
const (
	accessLogBurst  = 10
	accessLogWindow = 10 * time.Second
)

// accessLogObserver returns an observer that writes one line per request
// to logger, at level Info: the method (cut to 64 bytes when longer, by the
// handler), the route template (never the path as sent, nor its query),
// the operation, the status, the error code (empty for a success), the
// duration, the caller's principal (empty when the caller was not
// authenticated; a principal names a key without revealing it) and, when
// the request is traced, its trace and span IDs.
//
// A client that makes errors fast cannot make the log as long as its
// requests: past accessLogBurst answers from 400 to 499 (a 499 is a request
// the client abandoned) on one connection within accessLogWindow, the
// others of that window are not logged one by one but counted, and one line
// "petstore: more like this" gives their count and the last of them when
// the window ends. Successes, redirects and 5xx answers are always logged,
// so a normal request is never lost among abuse.
func accessLogObserver(logger *slog.Logger) func(context.Context, petstore.Observation) {
	return newAccessLog(logger, accessLogBurst, accessLogWindow, time.AfterFunc).observe
}

// accessLog is the state of an access log observer: the connections that
// have had a client error in their current window.
type accessLog struct {
	logger *slog.Logger
	burst  int
	window time.Duration
	// afterFunc is time.AfterFunc; tests replace it to end windows when
	// they choose.
	afterFunc func(time.Duration, func()) *time.Timer

	mu    sync.Mutex
	conns map[any]*connErrors // by the connection's identity (see connectionOf)
}

// connErrors counts one connection's client errors in its current window.
type connErrors struct {
	errors     int // answers from 400 to 499 in the window, logged or not
	suppressed int // those not logged
	start      time.Time
	last       petstore.Observation // the last one not logged
}

func newAccessLog(logger *slog.Logger, burst int, window time.Duration, afterFunc func(time.Duration, func()) *time.Timer) *accessLog {
	return &accessLog{logger: logger, burst: burst, window: window, afterFunc: afterFunc, conns: map[any]*connErrors{}}
}

// connectionOf returns what identifies the connection that the request of
// ctx came on: the *connBodies that the server's ConnContext gave it,
// shared by every request and HTTP/2 stream of the connection. It is nil
// for a request on a connection that ConnContext did not see.
func connectionOf(ctx context.Context) any {
	if c, ok := ctx.Value(connBodiesKey{}).(*connBodies); ok && c != nil {
		return c
	}
	return nil
}

// observe logs o, or counts it when its connection has spent its budget
// of client errors for the window.
func (a *accessLog) observe(ctx context.Context, o petstore.Observation) {
	conn := connectionOf(ctx)
	if o.Status < 400 || o.Status >= 500 || conn == nil {
		a.write(ctx, o)
		return
	}
	a.mu.Lock()
	c := a.conns[conn]
	if c == nil {
		c = &connErrors{start: time.Now()}
		a.conns[conn] = c
		a.afterFunc(a.window, func() { a.end(conn) })
	}
	c.errors++
	suppress := c.errors > a.burst
	if suppress {
		c.suppressed++
		c.last = o
	}
	a.mu.Unlock()
	if !suppress {
		a.write(ctx, o)
	}
}

// end ends the window of conn, logging the count of what was not logged.
func (a *accessLog) end(conn any) {
	a.mu.Lock()
	c := a.conns[conn]
	delete(a.conns, conn)
	a.mu.Unlock()
	if c == nil || c.suppressed == 0 {
		return
	}
	o := c.last
	a.logger.LogAttrs(context.Background(), slog.LevelInfo, "petstore: more like this",
		slog.Int("count", c.suppressed),
		slog.Duration("window", time.Since(c.start)),
		slog.String("method", o.Method),
		slog.String("route", o.Route),
		slog.String("operation", string(o.Operation)),
		slog.Int("status", o.Status),
		slog.String("code", string(o.Code)),
		slog.String("principal", o.Principal),
	)
}

// write logs one request.
func (a *accessLog) write(ctx context.Context, o petstore.Observation) {
	attrs := make([]slog.Attr, 0, 10)
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
	a.logger.LogAttrs(ctx, slog.LevelInfo, "petstore: request", attrs...)
}
