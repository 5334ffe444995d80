package otelpetstore_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/memstore"
	"github.com/petstore-go/petstore/otelpetstore"
)

// The keys of the fixture's handler.
const (
	keyA = "key-alpha"
	keyB = "key-bravo"
)

// principalOf returns the principal that APIKeys names the caller with key.
func principalOf(t testing.TB, key string) string {
	t.Helper()
	ctx, err := petstore.APIKeys(key).Authenticate(context.Background(), petstore.OpGetPet, key)
	if err != nil {
		t.Fatal(err)
	}
	p := petstore.Principal(ctx)
	if p == "" {
		t.Fatalf("APIKeys names no principal for %q", key)
	}
	return p
}

// fixture is a petstore handler over store, api, observed by a Telemetry,
// tel, that records into a span recorder and a manual metric reader; url
// serves it behind tel's Middleware on loopback.
type fixture struct {
	url    string
	api    http.Handler
	tel    *otelpetstore.Telemetry
	tp     *sdktrace.TracerProvider
	spans  *tracetest.SpanRecorder
	reader *sdkmetric.ManualReader
}

func newFixture(t *testing.T, store petstore.Store) *fixture {
	t.Helper()
	f := &fixture{spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader()}
	f.tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(f.spans))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(f.reader))
	t.Cleanup(func() {
		if err := errors.Join(f.tp.Shutdown(context.Background()), mp.Shutdown(context.Background())); err != nil {
			t.Error(err)
		}
	})
	var err error
	f.tel, err = otelpetstore.New(otelpetstore.WithMeterProvider(mp), otelpetstore.WithTracerProvider(f.tp),
		otelpetstore.WithPropagator(propagation.TraceContext{}))
	if err != nil {
		t.Fatal(err)
	}
	f.serve(t, store)
	return f
}

// serve sets f.api to a handler on store observed by f.tel, its watch
// streams too, and f.url to a server of it behind f.tel's Middleware.
func (f *fixture) serve(t *testing.T, store petstore.Store) {
	t.Helper()
	var err error
	f.api, err = petstore.New(petstore.WithStore(store), petstore.WithAuthenticator(petstore.APIKeys(keyA, keyB)),
		petstore.WithObserver(f.tel.Observe), petstore.WithWatch(petstore.Watch{Observe: f.tel.ObserveWatch}))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(f.tel.Middleware(f.api))
	t.Cleanup(srv.Close)
	f.url = srv.URL
}

// call sends a request and returns its status. A non-zero traceID sends a
// traceparent header of that trace, with parent span ID parentSpan.
func (f *fixture) call(t testing.TB, method, path, key, body string, traceID trace.TraceID) int {
	t.Helper()
	r, err := http.NewRequest(method, f.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		r.Header.Set("Authorization", "Bearer "+key)
	}
	if body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	if traceID.IsValid() {
		r.Header.Set("Traceparent", fmt.Sprintf("00-%s-%s-01", traceID, parentSpan))
	}
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode
}

// parentSpan is the parent span ID of every traceparent that tests send.
var parentSpan = trace.SpanID{0xb7, 0xad, 0x6b, 0x71, 0x69, 0x20, 0x33, 0x31}

// traceIDOf returns a trace ID that tells request i apart.
func traceIDOf(i int) trace.TraceID {
	return trace.TraceID{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, byte(i + 1)}
}

// attrMap renders attributes as key=value strings, for cmp.Diff.
func attrMap(kvs []attribute.KeyValue) map[string]string {
	m := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		m[string(kv.Key)] = kv.Value.String()
	}
	return m
}

// TestTelemetry sends known traffic through Middleware and a handler
// observed by Observe, and checks each request's span, the duration
// histogram's counts and the deprecated counter.
func TestTelemetry(t *testing.T) {
	f := newFixture(t, memstore.New())
	a, b := principalOf(t, keyA), principalOf(t, keyB)
	requests := []struct {
		method, path, key, body string
		traceparent             bool
		wantStatus              int
		wantName                string
		wantRoute               string
		wantAttrs               map[string]string // beside the method, route, status, url.scheme and url.path
	}{
		{"POST", "/v1/pets", keyA, `{"name":"Rex","categoryId":1}`, true, 201, "createPet", "/v1/pets", nil},
		{"POST", "/v1/pets", keyB, `{"name":"Tom","categoryId":2}`, true, 201, "createPet", "/v1/pets", nil},
		{"GET", "/v1/pets", keyA, "", true, 200, "listPets", "/v1/pets", nil},
		{"GET", "/v1/pets?limit=1", keyB, "", false, 200, "listPets", "/v1/pets", nil},
		{"GET", "/v1/pets/1", keyA, "", true, 200, "getPet", "/v1/pets/{petId}", nil},
		{"GET", "/v1/pets/2", keyB, "", true, 200, "getPet", "/v1/pets/{petId}", nil},
		{"GET", "/v1/pets/99", keyB, "", true, 404, "getPet", "/v1/pets/{petId}", map[string]string{"error.type": "not_found"}},
		{"GET", "/v1/pets/1", "not-a-key", "", true, 401, "getPet", "/v1/pets/{petId}", map[string]string{"error.type": "unauthorized"}},
		{"GET", "/v1/pets/x", keyA, "", true, 400, "getPet", "/v1/pets/{petId}", map[string]string{"error.type": "invalid_parameter"}},
		{"DELETE", "/v1/pets", keyA, "", true, 405, "DELETE /v1/pets", "/v1/pets", map[string]string{"error.type": "method_not_allowed"}},
		{"BREW", "/v1/pets", keyA, "", true, 405, "HTTP /v1/pets", "/v1/pets", map[string]string{"http.request.method": "_OTHER", "http.request.method_original": "BREW", "error.type": "method_not_allowed"}},
		{"GET", "/v1/orders", keyA, "", true, 404, "GET", "", map[string]string{"error.type": "not_found"}},
	}
	for i, q := range requests {
		var id trace.TraceID
		if q.traceparent {
			id = traceIDOf(i)
		}
		if got := f.call(t, q.method, q.path, q.key, q.body, id); got != q.wantStatus {
			t.Fatalf("%s %s: status %d, want %d", q.method, q.path, got, q.wantStatus)
		}
	}

	spans := f.spans.Ended()
	if len(spans) != len(requests) {
		t.Errorf("%d spans ended, want one per request, %d", len(spans), len(requests))
	}
	byTrace := make(map[trace.TraceID][]sdktrace.ReadOnlySpan)
	for _, s := range spans {
		byTrace[s.SpanContext().TraceID()] = append(byTrace[s.SpanContext().TraceID()], s)
	}
	for i, q := range requests {
		var s sdktrace.ReadOnlySpan
		if q.traceparent {
			got := byTrace[traceIDOf(i)]
			if len(got) != 1 {
				t.Errorf("%s %s: %d spans in the trace of its traceparent, want 1", q.method, q.path, len(got))
				continue
			}
			s = got[0]
			if s.Parent().SpanID() != parentSpan || !s.Parent().IsRemote() {
				t.Errorf("%s %s: parent %v, want the remote span %v of the traceparent", q.method, q.path, s.Parent().SpanID(), parentSpan)
			}
		} else {
			for _, c := range spans {
				if !c.Parent().IsValid() {
					s = c
				}
			}
			if s == nil {
				t.Errorf("%s %s: no root span", q.method, q.path)
				continue
			}
		}
		if s.Name() != q.wantName || s.SpanKind() != trace.SpanKindServer {
			t.Errorf("%s %s: span %q of kind %v, want %q of kind server", q.method, q.path, s.Name(), s.SpanKind(), q.wantName)
		}
		if s.Status().Code != codes.Unset {
			t.Errorf("%s %s: span status %v, want unset below 500", q.method, q.path, s.Status())
		}
		want := map[string]string{"url.scheme": "http", "url.path": strings.SplitN(q.path, "?", 2)[0],
			"http.request.method": q.method, "http.response.status_code": strconv.Itoa(q.wantStatus)}
		if q.wantRoute != "" {
			want["http.route"] = q.wantRoute
		}
		maps.Copy(want, q.wantAttrs)
		if diff := cmp.Diff(want, attrMap(s.Attributes())); diff != "" {
			t.Errorf("%s %s: span attributes (-want +got):\n%s", q.method, q.path, diff)
		}
	}

	rm := f.collect(t)
	wantCounts := map[string]uint64{
		"route=/v1/pets method=POST status=201 error=":                         2,
		"route=/v1/pets method=GET status=200 error=":                          2,
		"route=/v1/pets/{petId} method=GET status=200 error=":                  2,
		"route=/v1/pets/{petId} method=GET status=404 error=not_found":         1,
		"route=/v1/pets/{petId} method=GET status=401 error=unauthorized":      1,
		"route=/v1/pets/{petId} method=GET status=400 error=invalid_parameter": 1,
		"route=/v1/pets method=DELETE status=405 error=method_not_allowed":     1,
		"route=/v1/pets method=_OTHER status=405 error=method_not_allowed":     1,
		"route= method=GET status=404 error=not_found":                         1,
	}
	if diff := cmp.Diff(wantCounts, durationCounts(t, rm)); diff != "" {
		t.Errorf("http.server.request.duration counts (-want +got):\n%s", diff)
	}
	// getPet counts whatever its status, but not for the unauthenticated caller.
	if diff := cmp.Diff(map[string]int64{a: 2, b: 2}, deprecatedCounts(t, rm)); diff != "" {
		t.Errorf("petstore.deprecated.requests by principal (-want +got):\n%s", diff)
	}
}

// collect reads the metrics that the fixture recorded.
func (f *fixture) collect(t testing.TB) metricdata.ResourceMetrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := f.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	return rm
}

// findMetric returns the metric of the otelpetstore scope named name.
func findMetric(t testing.TB, rm metricdata.ResourceMetrics, name string) metricdata.Metrics {
	t.Helper()
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != otelpetstore.ScopeName {
			continue
		}
		for _, m := range sm.Metrics {
			if m.Name == name {
				return m
			}
		}
	}
	t.Fatalf("no metric %s of scope %s", name, otelpetstore.ScopeName)
	return metricdata.Metrics{}
}

// onlyDurationPoint collects the fixture's metrics and returns them with
// the one data point of http.server.request.duration, failing the test
// when there is not exactly one.
func (f *fixture) onlyDurationPoint(t testing.TB) (metricdata.ResourceMetrics, metricdata.HistogramDataPoint[float64]) {
	t.Helper()
	rm := f.collect(t)
	h := findMetric(t, rm, "http.server.request.duration").Data.(metricdata.Histogram[float64])
	if len(h.DataPoints) != 1 {
		t.Fatalf("%d points, want 1", len(h.DataPoints))
	}
	return rm, h.DataPoints[0]
}

// durationCounts returns the counts of the duration histogram by route,
// method, status and error type, and checks what every point shares: the
// unit, the bucket boundaries of the semantic conventions and url.scheme.
func durationCounts(t testing.TB, rm metricdata.ResourceMetrics) map[string]uint64 {
	t.Helper()
	m := findMetric(t, rm, "http.server.request.duration")
	if m.Unit != "s" {
		t.Errorf("unit %q, want s", m.Unit)
	}
	h, ok := m.Data.(metricdata.Histogram[float64])
	if !ok {
		t.Fatalf("http.server.request.duration is a %T, want a histogram of float64", m.Data)
	}
	bounds := []float64{0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10}
	keys := []attribute.Key{"http.route", "http.request.method", "http.response.status_code", "url.scheme", "error.type"}
	got := make(map[string]uint64)
	for _, p := range h.DataPoints {
		if diff := cmp.Diff(bounds, p.Bounds); diff != "" {
			t.Errorf("bucket boundaries (-want +got):\n%s", diff)
		}
		if v, _ := p.Attributes.Value("url.scheme"); v.AsString() != "http" {
			t.Errorf("url.scheme %q, want http", v.AsString())
		}
		if p.Sum <= 0 {
			t.Errorf("sum of durations %v, want more than 0", p.Sum)
		}
		route, _ := p.Attributes.Value("http.route")
		method, _ := p.Attributes.Value("http.request.method")
		status, _ := p.Attributes.Value("http.response.status_code")
		errType, _ := p.Attributes.Value("error.type")
		for _, kv := range p.Attributes.ToSlice() {
			if !slices.Contains(keys, kv.Key) {
				t.Errorf("unexpected attribute %v", kv)
			}
		}
		got[fmt.Sprintf("route=%s method=%s status=%d error=%s", route.AsString(), method.AsString(), status.AsInt64(), errType.AsString())] += p.Count
	}
	return got
}

// deprecatedCounts returns the deprecated counter by principal, and checks
// that every point is of getPet.
func deprecatedCounts(t testing.TB, rm metricdata.ResourceMetrics) map[string]int64 {
	t.Helper()
	m := findMetric(t, rm, otelpetstore.DeprecatedRequestsName)
	s, ok := m.Data.(metricdata.Sum[int64])
	if !ok || !s.IsMonotonic {
		t.Fatalf("%s is a %T, want a monotonic sum of int64", m.Name, m.Data)
	}
	got := make(map[string]int64)
	for _, p := range s.DataPoints {
		if op, _ := p.Attributes.Value(otelpetstore.OperationKey); op.AsString() != "getPet" || p.Attributes.Len() != 2 {
			t.Errorf("attributes %v, want %s and %s=getPet", p.Attributes.ToSlice(), otelpetstore.PrincipalKey, otelpetstore.OperationKey)
		}
		principal, _ := p.Attributes.Value(otelpetstore.PrincipalKey)
		got[principal.AsString()] += p.Value
	}
	return got
}

// TestConcurrent sends requests from several goroutines at once and checks
// that every one is counted (run it with -race).
func TestConcurrent(t *testing.T) {
	f := newFixture(t, memstore.New())
	if got := f.call(t, "POST", "/v1/pets", keyA, `{"name":"Rex","categoryId":1}`, trace.TraceID{}); got != 201 {
		t.Fatalf("create: status %d", got)
	}
	const workers, each = 8, 25
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			key := []string{keyA, keyB}[w%2]
			for range each {
				if got := f.call(t, "GET", "/v1/pets/1", key, "", trace.TraceID{}); got != 200 {
					t.Errorf("get: status %d", got)
				}
				if got := f.call(t, "GET", "/v1/pets", key, "", trace.TraceID{}); got != 200 {
					t.Errorf("list: status %d", got)
				}
			}
		})
	}
	wg.Wait()
	rm := f.collect(t)
	want := map[string]uint64{
		"route=/v1/pets method=POST status=201 error=":        1,
		"route=/v1/pets method=GET status=200 error=":         workers * each,
		"route=/v1/pets/{petId} method=GET status=200 error=": workers * each,
	}
	if diff := cmp.Diff(want, durationCounts(t, rm)); diff != "" {
		t.Errorf("http.server.request.duration counts (-want +got):\n%s", diff)
	}
	wantDeprecated := map[string]int64{principalOf(t, keyA): workers / 2 * each, principalOf(t, keyB): workers / 2 * each}
	if diff := cmp.Diff(wantDeprecated, deprecatedCounts(t, rm)); diff != "" {
		t.Errorf("petstore.deprecated.requests by principal (-want +got):\n%s", diff)
	}
	if got, want := len(f.spans.Ended()), 1+2*workers*each; got != want {
		t.Errorf("%d spans, want %d", got, want)
	}
}

// TestObserveWithoutMiddleware checks that Observe alone records the
// metrics, without url.scheme, and leaves a span it did not start alone.
func TestObserveWithoutMiddleware(t *testing.T) {
	o := newFixture(t, memstore.New())
	ctx, host := o.tp.Tracer("host").Start(context.Background(), "host span")
	r := httptest.NewRequestWithContext(ctx, "GET", "/v1/pets/7", nil)
	r.Header.Set("Authorization", "Bearer "+keyA)
	w := httptest.NewRecorder()
	o.api.ServeHTTP(w, r)
	host.End()
	if w.Code != 404 {
		t.Fatalf("status %d, want 404", w.Code)
	}
	ended := o.spans.Ended()
	if len(ended) != 1 || ended[0].Name() != "host span" || len(ended[0].Attributes()) != 0 {
		t.Errorf("o.spans %v, want the host's span untouched", ended)
	}
	rm, point := o.onlyDurationPoint(t)
	want := map[string]string{"http.route": "/v1/pets/{petId}", "http.request.method": "GET",
		"http.response.status_code": "404", "error.type": "not_found"}
	if diff := cmp.Diff(want, attrMap(point.Attributes.ToSlice())); diff != "" {
		t.Errorf("attributes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]int64{principalOf(t, keyA): 1}, deprecatedCounts(t, rm)); diff != "" {
		t.Errorf("petstore.deprecated.requests by principal (-want +got):\n%s", diff)
	}
}

// TestNewRefusesNil checks that New names the option that fixes each
// mistake, and reports them all at once.
func TestNewRefusesNil(t *testing.T) {
	tests := []struct {
		name string
		opts []otelpetstore.Option
		want []string
	}{
		{"nil option", []otelpetstore.Option{nil}, []string{"an option is nil"}},
		{"nil providers and propagator", []otelpetstore.Option{otelpetstore.WithMeterProvider(nil), otelpetstore.WithTracerProvider(nil), otelpetstore.WithPropagator(nil)},
			[]string{"WithMeterProvider", "otel.GetMeterProvider()", "WithTracerProvider", "otel.GetTracerProvider()", "WithPropagator", "propagation.TraceContext{}"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tel, err := otelpetstore.New(tt.opts...)
			if err == nil || tel != nil {
				t.Fatalf("New = %v, %v; want an error", tel, err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

// globals sets the global providers and propagator, once per process: the
// global API delegates to the first providers set only, so a second run of
// TestNewDefaults finds these. The reader reports deltas, the counts since
// the run before.
var globals = sync.OnceValues(func() (*tracetest.SpanRecorder, *sdkmetric.ManualReader) {
	spans := tracetest.NewSpanRecorder()
	reader := sdkmetric.NewManualReader(sdkmetric.WithTemporalitySelector(
		func(sdkmetric.InstrumentKind) metricdata.Temporality { return metricdata.DeltaTemporality }))
	otel.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans)))
	otel.SetMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)))
	otel.SetTextMapPropagator(propagation.TraceContext{})
	return spans, reader
})

// TestNewDefaults checks that New without options records on the global
// providers and extracts with the global propagator, even when the host
// sets them after New (on the first run). It is the only test that sets them.
func TestNewDefaults(t *testing.T) {
	tel, err := otelpetstore.New()
	if err != nil {
		t.Fatal(err)
	}
	spans, reader := globals()
	f := &fixture{tel: tel, spans: spans, reader: reader}
	f.serve(t, memstore.New())
	before := len(spans.Ended())
	if got := f.call(t, "GET", "/v1/pets", keyA, "", traceIDOf(0)); got != 200 {
		t.Fatalf("status %d, want 200", got)
	}
	ended := spans.Ended()[before:]
	if len(ended) != 1 || ended[0].Name() != "listPets" || ended[0].Parent().SpanID() != parentSpan {
		t.Errorf("spans %v, want one listPets, child of the traceparent", ended)
	}
	want := map[string]uint64{"route=/v1/pets method=GET status=200 error=": 1}
	if diff := cmp.Diff(want, durationCounts(t, f.collect(t))); diff != "" {
		t.Errorf("http.server.request.duration counts (-want +got):\n%s", diff)
	}
}

// TestObserveAllocs checks that Observe, once it has seen a kind of request,
// records another of the kind without allocating: the attribute sets are
// made once.
func TestObserveAllocs(t *testing.T) {
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	tel, err := otelpetstore.New(otelpetstore.WithMeterProvider(mp))
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []petstore.Observation{
		{Operation: petstore.OpListPets, Route: "/v1/pets", Method: "GET", Status: 200, Principal: "key-1"},
		{Operation: petstore.OpGetPet, Route: "/v1/pets/{petId}", Method: "GET", Status: 404, Code: "not_found", Principal: "key-1", Deprecated: true},
		{Operation: petstore.OpNone, Method: "BREW", Status: 404, Code: "not_found"},
	} {
		ctx := context.Background()
		tel.Observe(ctx, o)
		if got := testing.AllocsPerRun(100, func() { tel.Observe(ctx, o) }); got != 0 {
			t.Errorf("%s %s %d: %v allocations, want 0", o.Method, o.Route, o.Status, got)
		}
	}
}

// failingStore is a Store whose List calls fail and then fails. It fakes
// List alone: the embedded Store is nil, and the test calls nothing else.
type failingStore struct {
	petstore.Store
	fail func()
}

func (s failingStore) List(context.Context, petstore.ListOptions) ([]petstore.Pet, error) {
	s.fail()
	return nil, errors.New("the disk is gone")
}

// TestFailedRequest checks how a request that fails is recorded: one
// answered with a 5xx has a span of status Error and its error code; one
// aborted before any status was sent ends its span, with status Error, and
// has error.type _OTHER and no status; one whose client went away has
// status 499 and error.type client_closed_request, outside the 5xx series,
// and a span not marked as an error. The histogram's point has the span's
// attributes but the path.
func TestFailedRequest(t *testing.T) {
	tests := []struct {
		name   string
		store  petstore.Store
		cancel bool // the client hangs up before its request is served
		status sdktrace.Status
		attrs  map[string]string // beside the method, scheme, path and route
	}{
		{"5xx", failingStore{fail: func() {}}, false, sdktrace.Status{Code: codes.Error, Description: "internal"},
			map[string]string{"http.response.status_code": "500", "error.type": "internal"}},
		{"aborted", failingStore{fail: func() { panic(http.ErrAbortHandler) }}, false, sdktrace.Status{Code: codes.Error, Description: "_OTHER"},
			map[string]string{"error.type": "_OTHER"}},
		{"client gone", memstore.New(), true, sdktrace.Status{Code: codes.Unset},
			map[string]string{"http.response.status_code": "499", "error.type": "client_closed_request"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := newFixture(t, tt.store)
			ctx, cancel := context.WithCancel(t.Context())
			if tt.cancel {
				cancel()
			}
			defer cancel()
			r := httptest.NewRequestWithContext(ctx, "GET", "/v1/pets", nil)
			r.Header.Set("Authorization", "Bearer "+keyA)
			func() {
				defer func() {
					if v, want := recover(), tt.name == "aborted"; (v == http.ErrAbortHandler) != want || !want && v != nil {
						t.Errorf("recovered %v; want http.ErrAbortHandler passed on for an aborted request, nothing else", v)
					}
				}()
				o.tel.Middleware(o.api).ServeHTTP(httptest.NewRecorder(), r)
			}()
			ended := o.spans.Ended()
			if len(ended) != 1 {
				t.Fatalf("%d spans ended, want 1", len(ended))
			}
			if diff := cmp.Diff(tt.status, ended[0].Status()); diff != "" {
				t.Errorf("span status (-want +got):\n%s", diff)
			}
			want := map[string]string{"http.request.method": "GET", "url.scheme": "http", "url.path": "/v1/pets", "http.route": "/v1/pets"}
			maps.Copy(want, tt.attrs)
			if diff := cmp.Diff(want, attrMap(ended[0].Attributes())); diff != "" {
				t.Errorf("span attributes (-want +got):\n%s", diff)
			}
			_, point := o.onlyDurationPoint(t)
			delete(want, "url.path")
			if diff := cmp.Diff(want, attrMap(point.Attributes.ToSlice())); diff != "" {
				t.Errorf("histogram attributes (-want +got):\n%s", diff)
			}
		})
	}
}
