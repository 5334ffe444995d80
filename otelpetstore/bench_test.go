package otelpetstore_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/memstore"
	"github.com/petstore-go/petstore/otelpetstore"
)

// BenchmarkHandler serves one request again and again in process, with a
// ResponseWriter and a request that are reused, so that allocs/op counts the
// handler's allocations and the telemetry's. Its sub-benchmarks are:
//
//   - telemetry=off: the handler without an observer, the baseline;
//   - telemetry=noop: Middleware and Observe on no-op providers, as with
//     the global providers that a host has not set;
//   - telemetry=metrics: Observe alone on an SDK meter provider;
//   - telemetry=metrics+traces: Middleware and Observe on SDK providers,
//     sampling every span into a batch processor.
//
// Compare them with
//
//	go test -run '^$' -bench Handler -benchmem -count 6 . > bench.txt
//	benchstat -col /telemetry bench.txt
func BenchmarkHandler(b *testing.B) {
	for _, op := range []struct{ name, target string }{
		{"listPets", "/v1/pets?limit=10"},
		{"getPet", "/v1/pets/1"},
	} {
		for _, tel := range []string{"off", "noop", "metrics", "metrics+traces"} {
			b.Run("op="+op.name+"/telemetry="+tel, func(b *testing.B) {
				h := benchHandler(b, tel)
				r := httptest.NewRequest(http.MethodGet, op.target, nil)
				r.Header.Set("Authorization", "Bearer "+keyA)
				w := &benchWriter{header: make(http.Header, 8)}
				b.ReportAllocs()
				for b.Loop() {
					clear(w.header)
					w.status = 0
					h.ServeHTTP(w, r)
					if w.status != http.StatusOK {
						b.Fatalf("status %d", w.status)
					}
				}
			})
		}
	}
}

// benchHandler returns a handler over a memstore of 100 pets with the
// telemetry that tel names.
func benchHandler(b *testing.B, tel string) http.Handler {
	b.Helper()
	store := memstore.New()
	for i := range 100 {
		if _, _, err := store.Add(context.Background(), petstore.NewPet{Name: "pet" + strconv.Itoa(i), CategoryID: 1}, petstore.AddOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	opts := []petstore.Option{petstore.WithStore(store), petstore.WithAuthenticator(petstore.APIKeys(keyA))}
	var t *otelpetstore.Telemetry
	var err error
	switch tel {
	case "off":
	case "noop":
		t, err = otelpetstore.New(otelpetstore.WithMeterProvider(noop.NewMeterProvider()),
			otelpetstore.WithTracerProvider(tracenoop.NewTracerProvider()), otelpetstore.WithPropagator(propagation.TraceContext{}))
	case "metrics", "metrics+traces":
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
		tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter()))
		b.Cleanup(func() {
			_ = mp.Shutdown(context.Background())
			_ = tp.Shutdown(context.Background())
		})
		t, err = otelpetstore.New(otelpetstore.WithMeterProvider(mp), otelpetstore.WithTracerProvider(tp),
			otelpetstore.WithPropagator(propagation.TraceContext{}))
	default:
		b.Fatalf("no telemetry %q", tel)
	}
	if err != nil {
		b.Fatal(err)
	}
	if t != nil {
		opts = append(opts, petstore.WithObserver(t.Observe))
	}
	api, err := petstore.New(opts...)
	if err != nil {
		b.Fatal(err)
	}
	if tel == "noop" || tel == "metrics+traces" {
		return t.Middleware(api)
	}
	return api
}

// benchWriter is a reusable http.ResponseWriter that keeps the status and
// discards the body.
type benchWriter struct {
	header http.Header
	status int
}

func (w *benchWriter) Header() http.Header { return w.header }

func (w *benchWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}

func (w *benchWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return len(p), nil
}
