package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/otlptranslator"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/otelpetstore"
	"github.com/petstore-go/petstore/sqlitestore"
)

// The OpenTelemetry variables that decide whether to send traces; the OTLP
// exporter reads the others itself.
const (
	otlpEndpointVar       = "OTEL_EXPORTER_OTLP_ENDPOINT"
	otlpTracesEndpointVar = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
	otlpProtocolVar       = "OTEL_EXPORTER_OTLP_PROTOCOL"
	otlpTracesProtocolVar = "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
	otelSDKDisabledVar    = "OTEL_SDK_DISABLED"
	otelTracesExporterVar = "OTEL_TRACES_EXPORTER"
)

// tracingConfig tells from the environment whether to send traces over
// OTLP, refusing a protocol other than http/protobuf.
func tracingConfig(getenv func(string) string) (bool, error) {
	switch e := getenv(otelTracesExporterVar); {
	case getenv(otlpEndpointVar) == "" && getenv(otlpTracesEndpointVar) == "", getenv(otelSDKDisabledVar) == "true", e == "none":
		return false, nil
	case e != "" && e != "otlp":
		return false, fmt.Errorf("%s=%s: petstore sends traces only with otlp (or none for no traces)", otelTracesExporterVar, e)
	}
	v := otlpTracesProtocolVar // the traces' own variable wins over the general one
	if getenv(v) == "" {
		v = otlpProtocolVar
	}
	if p := getenv(v); p != "" && p != "http/protobuf" {
		return false, fmt.Errorf("%s=%s: petstore sends traces over OTLP with http/protobuf only; "+
			"set it to http/protobuf, or unset it, and point the endpoint at the collector's HTTP port (4318)", v, p)
	}
	return true, nil
}

// observability is what the operator turns on to watch the server; each
// part is nil or empty when off, so that the handler spends nothing on it.
type observability struct {
	options []petstore.Option                                // for petstore.New: its observer
	watch   func(context.Context, petstore.WatchObservation) // observes the watch streams
	wrap    func(http.Handler) http.Handler                  // starts a span per request
	metrics http.Handler                                     // serves /metrics
	closers []func(context.Context) error                    // shut the providers down
}

// newObservability sets up metrics (with those of extra) when withMetrics,
// traces when tracing, and a line per request on logger when accessLog.
func newObservability(ctx context.Context, withMetrics, tracing, accessLog bool, logger *slog.Logger,
	extra ...prometheus.Collector) (*observability, error) {
	o := &observability{wrap: func(h http.Handler) http.Handler { return h }}
	var observers []func(context.Context, petstore.Observation)
	if withMetrics || tracing {
		res, err := resource.New(ctx, resource.WithAttributes(semconv.ServiceName("petstore")), resource.WithTelemetrySDK(),
			resource.WithFromEnv()) // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win
		if err != nil {
			return nil, fmt.Errorf("the OpenTelemetry resource: %w", err)
		}
		telOpts := []otelpetstore.Option{otelpetstore.WithPropagator(propagation.TraceContext{})}
		if withMetrics {
			// Named the Prometheus way: http_server_request_duration_seconds.
			// The series are the code's own, each named once: a clash is a bug.
			registry := prometheus.NewRegistry()
			registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
			registry.MustRegister(extra...)
			exporter, err := otelprom.New(otelprom.WithRegisterer(registry), otelprom.WithTranslationStrategy(otlptranslator.UnderscoreEscapingWithSuffixes))
			if err != nil {
				return nil, fmt.Errorf("the Prometheus exporter: %w", err)
			}
			mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exporter), sdkmetric.WithResource(res))
			o.metrics = promhttp.HandlerFor(registry, promhttp.HandlerOpts{})
			telOpts = append(telOpts, otelpetstore.WithMeterProvider(mp))
			o.closers = append(o.closers, mp.Shutdown)
		}
		if tracing {
			exporter, err := otlptracehttp.New(ctx)
			if err != nil {
				o.close(context.Background())
				return nil, fmt.Errorf("the OTLP trace exporter: %w", err)
			}
			tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exporter), sdktrace.WithResource(res))
			telOpts = append(telOpts, otelpetstore.WithTracerProvider(tp))
			o.closers = append(o.closers, tp.Shutdown)
		}
		tel, err := otelpetstore.New(telOpts...)
		if err != nil {
			o.close(context.Background())
			return nil, err
		}
		observers = append(observers, tel.Observe)
		if withMetrics {
			o.watch = tel.ObserveWatch
		}
		if tracing {
			o.wrap = tel.Middleware // only with traces: a span costs allocations even unrecorded
		}
	}
	if accessLog {
		// The route template (never the path as sent), never a key, and a traced request's IDs.
		observers = append(observers, func(ctx context.Context, ob petstore.Observation) {
			attrs := []slog.Attr{slog.String("method", ob.Method), slog.String("route", ob.Route), slog.String("operation", string(ob.Operation)),
				slog.Int("status", ob.Status), slog.String("code", string(ob.Code)), slog.Duration("duration", ob.Duration),
				slog.String("principal", ob.Principal)}
			if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
				attrs = append(attrs, slog.String("trace_id", sc.TraceID().String()), slog.String("span_id", sc.SpanID().String()))
			}
			logger.LogAttrs(ctx, slog.LevelInfo, "petstore: request", attrs...)
		})
	}
	if len(observers) > 0 {
		o.options = append(o.options, petstore.WithObserver(func(ctx context.Context, ob petstore.Observation) {
			for _, f := range observers {
				f(ctx, ob)
			}
		}))
	}
	return o, nil
}

// close shuts the providers down, flushing what they hold.
func (o *observability) close(ctx context.Context) error {
	var errs []error
	for i := len(o.closers) - 1; i >= 0; i-- {
		errs = append(errs, o.closers[i](ctx))
	}
	return errors.Join(errs...)
}

// dataMetrics returns the series of the SQLite -wal file's size and blocked
// checkpoints unless store is nil, and of the backups' outcomes unless
// backups is, each read at each scrape.
func dataMetrics(store *sqlitestore.Store, backups *sqlitestore.Backups) []prometheus.Collector {
	var cs []prometheus.Collector
	if store != nil {
		cs = append(cs,
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "petstore_sqlite_wal_size_bytes",
				Help: "Size of the SQLite -wal file; it grows past its limit while a reader holds an old snapshot."},
				func() float64 {
					n, _ := store.WALSize() // 0 when there is no -wal file
					return float64(n)
				}),
			prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "petstore_sqlite_checkpoints_blocked_total",
				Help: "Checkpoints of the -wal file, past its limit, that a reader holding an old snapshot kept from finishing."},
				func() float64 { return float64(store.CheckpointsBlocked()) }))
	}
	if backups != nil {
		cs = append(cs,
			prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "petstore_backup_successes_total", Help: "Scheduled backups that succeeded."},
				func() float64 { return float64(backups.Stats().Successes) }),
			prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "petstore_backup_failures_total", Help: "Scheduled backups that failed; the log says why."},
				func() float64 { return float64(backups.Stats().Failures) }),
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "petstore_backup_last_success_seconds",
				Help: "Unix time of the last scheduled backup that succeeded; 0 before the first."},
				func() float64 {
					if t := backups.Stats().LastSuccess; !t.IsZero() {
						return float64(t.UnixNano()) / float64(time.Second)
					}
					return 0
				}))
	}
	return cs
}

// readyTimeout bounds the calls to the store that /readyz makes.
const readyTimeout = time.Second

// admin serves /metrics, /healthz and /readyz (docs/operating.md). /readyz
// answers 503, saying why, when the store fails its check or a list of one
// pet within readyTimeout, backups are failing, or the server shuts down.
type admin struct {
	metrics  http.Handler
	store    petstore.Store
	replicas func() []replicaProbe // the replicas' state, reported only; or nil
	redact   func(string) string   // removes secrets from a store's error
	backups  func() error          // the scheduled backups' state, or nil
	logger   *slog.Logger
	draining atomic.Bool // set when the server starts shutting down
}

func (a *admin) handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", a.metrics)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		writeStatus(w, http.StatusOK, probeBody{Status: "ok"})
	})
	mux.HandleFunc("GET /readyz", a.ready)
	return mux
}

// probeBody is the JSON body of /healthz and /readyz.
type probeBody struct {
	Status   string         `json:"status"`             // "ok" or "unavailable"
	Reason   string         `json:"reason,omitempty"`   // why it is unavailable
	Replicas []replicaProbe `json:"replicas,omitempty"` // the store's replicas, if any
}

func (a *admin) ready(w http.ResponseWriter, r *http.Request) {
	if a.draining.Load() {
		writeStatus(w, http.StatusServiceUnavailable, probeBody{Status: "unavailable",
			Reason: "the server is shutting down and finishing the requests in flight"})
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
	defer cancel()
	start := time.Now()
	notReady := func(level slog.Level, reason string) {
		a.logger.Log(ctx, level, "petstore: not ready", "reason", reason, "took", time.Since(start).Round(time.Millisecond))
		writeStatus(w, http.StatusServiceUnavailable, probeBody{Status: "unavailable", Reason: reason})
	}
	if s, ok := a.store.(interface{ Check(context.Context) error }); ok { // its schema and privileges
		if err := s.Check(ctx); err != nil && (ctx.Err() == nil || !errors.Is(err, context.DeadlineExceeded)) {
			notReady(slog.LevelError, "the store cannot serve: "+a.redact(err.Error()))
			return
		}
	}
	if a.backups != nil {
		if err := a.backups(); err != nil {
			notReady(slog.LevelError, "scheduled backups are failing: "+err.Error())
			return
		}
	}
	_, err := a.store.List(ctx, petstore.ListOptions{Limit: 1})
	switch {
	case err == nil:
		body := probeBody{Status: "ok"}
		if a.replicas != nil {
			body.Replicas = a.replicas()
		}
		writeStatus(w, http.StatusOK, body)
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil:
		notReady(slog.LevelWarn, fmt.Sprintf("the store did not answer a list of one pet within %v", readyTimeout))
	default:
		notReady(slog.LevelWarn, "the store failed a list of one pet: "+a.redact(err.Error()))
	}
}

// writeStatus writes body as JSON with status, never to be cached.
func writeStatus(w http.ResponseWriter, status int, body probeBody) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(body)
}

// serveAdmin serves a's endpoints on addr until stop, printing their URL;
// from when ctx is done, /readyz answers 503 while requests finish.
func serveAdmin(ctx context.Context, addr string, a *admin, stdout io.Writer) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("-admin-addr: %w", err)
	}
	srv := &http.Server{
		Handler:           a.handler(),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    16 << 10,
		ErrorLog:          slog.NewLogLogger(a.logger.Handler(), slog.LevelWarn),
	}
	stopDraining := context.AfterFunc(ctx, func() { a.draining.Store(true) })
	url := "http://" + ln.Addr().String()
	a.logger.Info("petstore: admin endpoints listening", "url", url)
	fmt.Fprintf(stdout, "admin endpoints at %s/metrics, /healthz and /readyz\n", url)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			a.logger.Error("petstore: admin endpoints stopped serving", "err", err)
		}
	}()
	return func() {
		stopDraining()
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(shutdownCtx); err != nil {
			a.logger.Warn("petstore: admin endpoints: shutdown", "err", err)
		}
		<-done
	}, nil
}
