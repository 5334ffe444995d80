package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/memstore"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// adminLine matches the line on which the server says where its admin
// endpoints are.
var adminLine = regexp.MustCompile(`(?m)^admin endpoints at (http://\S+)/metrics, /healthz and /readyz$`)

// adminURL returns the URL of p's admin endpoints, such as
// http://127.0.0.1:41235.
func adminURL(t *testing.T, p *serverProcess) string {
	t.Helper()
	m := adminLine.FindStringSubmatch(p.stdout.String())
	if m == nil {
		t.Fatalf("the server did not print where its admin endpoints are; stdout:\n%s", p.stdout)
	}
	return m[1]
}

// principalOf returns the principal that petstore.APIKeys gives key.
func principalOf(t *testing.T, key string) string {
	t.Helper()
	ctx, err := petstore.APIKeys(key).Authenticate(context.Background(), petstore.OpGetPet, key)
	if err != nil {
		t.Fatal(err)
	}
	return petstore.Principal(ctx)
}

// accessLine is what the admin tests check of an access log line.
type accessLine struct {
	Method, Route, Operation, Status, Code, Principal, TraceID string
}

// logField matches a key=value pair of slog's text format.
var logField = regexp.MustCompile(`(\w+)=("(?:[^"\\]|\\.)*"|\S*)`)

// accessLines returns the access log lines in log, in order.
func accessLines(t *testing.T, log string) []accessLine {
	t.Helper()
	var lines []accessLine
	for l := range strings.Lines(log) {
		if !strings.Contains(l, `msg="petstore: request"`) {
			continue
		}
		f := map[string]string{}
		for _, m := range logField.FindAllStringSubmatch(l, -1) {
			v := m[2]
			if strings.HasPrefix(v, `"`) {
				var err error
				if v, err = strconv.Unquote(v); err != nil {
					t.Fatalf("access log line %q: %v", l, err)
				}
			}
			f[m[1]] = v
		}
		if f["duration"] == "" {
			t.Errorf("access log line without a duration: %q", l)
		}
		lines = append(lines, accessLine{Method: f["method"], Route: f["route"], Operation: f["operation"],
			Status: f["status"], Code: f["code"], Principal: f["principal"], TraceID: f["trace_id"]})
	}
	return lines
}

// waitForAccessLines waits for p to have logged n access lines and returns
// them. The observer writes the line after the metrics are recorded, so
// that the metrics are complete once the lines are there.
func waitForAccessLines(t *testing.T, p *serverProcess, n int) []accessLine {
	t.Helper()
	var lines []accessLine
	waitUntil(t, p, fmt.Sprint(n, " access lines are logged"), func() bool {
		lines = accessLines(t, p.stderr.String())
		return len(lines) >= n
	})
	return lines
}

// scrape fetches and parses the metrics at url.
func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	a := mustSend(t, apiRequest{method: http.MethodGet, url: url})
	if a.status != http.StatusOK {
		t.Fatalf("GET %s: %v, want 200", url, a)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(a.body))
	if err != nil {
		t.Fatalf("GET %s: the body is not in the Prometheus text format: %v\n%s", url, err, a.body)
	}
	return families
}

// TestAdminMetrics runs the server with -admin-addr and -access-log: the
// access log has a line per request without any key, query or pet ID; the
// admin endpoints are not on the API's port; /metrics has the handler's,
// the service's, the Go runtime's and the process's metrics.
func TestAdminMetrics(t *testing.T) {
	const key, wrongKey, querySecret = "admin-metrics-key", "admin-metrics-wrong-key", "admin-query-secret"
	p := startServer(t, buildServer(t), key, nil, "-admin-addr", "127.0.0.1:0", "-access-log")
	admin, principal := adminURL(t, p), principalOf(t, key)
	api := "http://" + p.addr
	const pets, pet = "/v1/pets", "/v1/pets/{petId}"
	requests := []struct {
		apiRequest
		want accessLine
	}{
		{apiRequest{method: "POST", url: api + p.path, key: key, body: `{"name":"Rex","categoryId":1}`},
			accessLine{"POST", pets, "createPet", "201", "", principal, ""}},
		{apiRequest{method: "GET", url: api + p.path + "?limit=2&secret=" + querySecret, key: key},
			accessLine{"GET", pets, "listPets", "200", "", principal, ""}},
		{apiRequest{method: "GET", url: api + p.path + "/999", key: key},
			accessLine{"GET", pet, "getPet", "404", "not_found", principal, ""}},
		{apiRequest{method: "GET", url: api + p.path, key: wrongKey},
			accessLine{"GET", pets, "listPets", "401", "unauthorized", "", ""}},
		{apiRequest{method: "GET", url: api + "/metrics", key: key}, accessLine{"GET", "", "", "404", "not_found", principal, ""}},
		{apiRequest{method: "GET", url: api + "/healthz", key: key}, accessLine{"GET", "", "", "404", "not_found", principal, ""}},
		{apiRequest{method: "GET", url: api + "/readyz", key: key}, accessLine{"GET", "", "", "404", "not_found", principal, ""}},
	}
	var wantLines []accessLine
	for _, q := range requests {
		mustSend(t, q.apiRequest)
		wantLines = append(wantLines, q.want)
	}
	if diff := cmp.Diff(wantLines, waitForAccessLines(t, p, len(requests))); diff != "" {
		t.Errorf("access log lines (-want +got):\n%s", diff)
	}
	for _, secret := range []string{key, wrongKey, querySecret, "/999"} {
		if strings.Contains(p.stderr.String(), secret) {
			t.Errorf("the log shows %q:\n%s", secret, p.stderr)
		}
	}

	families := scrape(t, admin+"/metrics")
	for name, typ := range map[string]dto.MetricType{
		"http_server_request_duration_seconds": dto.MetricType_HISTOGRAM,
		"petstore_deprecated_requests_total":   dto.MetricType_COUNTER,
		"go_goroutines":                        dto.MetricType_GAUGE,
		"process_cpu_seconds_total":            dto.MetricType_COUNTER,
	} {
		if got := families[name]; got == nil || got.GetType() != typ {
			t.Errorf("/metrics: %s is %v, want a %v; families: %v", name, got.GetType(), typ, slices.Sorted(maps.Keys(families)))
		}
	}
	var n uint64
	for _, m := range families["http_server_request_duration_seconds"].GetMetric() {
		n += m.GetHistogram().GetSampleCount()
	}
	if n != uint64(len(requests)) {
		t.Errorf("http_server_request_duration_seconds counts %d requests, want %d", n, len(requests))
	}
	service := func(l *dto.LabelPair) bool { return l.GetName() == "service_name" && l.GetValue() == "petstore" }
	if info := families["target_info"].GetMetric(); len(info) != 1 || !slices.ContainsFunc(info[0].GetLabel(), service) {
		t.Errorf("target_info %v: want one, with service_name petstore", info)
	}

	for _, q := range []struct {
		method, path string
		status       int
		body         string
	}{
		{"GET", "/healthz", 200, `{"status":"ok"}` + "\n"},
		{"GET", "/readyz", 200, `{"status":"ok"}` + "\n"},
		{"HEAD", "/readyz", 200, ""},
		{"POST", "/healthz", 405, "Method Not Allowed\n"},
		{"GET", "/v1/pets", 404, "404 page not found\n"},
	} {
		a := mustSend(t, apiRequest{method: q.method, url: admin + q.path})
		if a.status != q.status || string(a.body) != q.body {
			t.Errorf("%s %s%s: %d %q, want %d %q", q.method, admin, q.path, a.status, a.body, q.status, q.body)
		}
	}
}

// adminStore is a Store whose List fails with err, or waits for its
// context to end when block is set.
type adminStore struct {
	petstore.Store
	err   error
	block bool
}

var _ petstore.Store = adminStore{}

func (s adminStore) List(ctx context.Context, opts petstore.ListOptions) ([]petstore.Pet, error) {
	if s.block {
		<-ctx.Done()
		return nil, fmt.Errorf("listing pets: %w", ctx.Err())
	}
	if s.err != nil {
		return nil, s.err
	}
	return s.Store.List(ctx, opts)
}

// TestAdminReady checks what /readyz answers for a store that answers,
// one that fails (with its secret redacted), one that does not answer
// within a second, and while the server shuts down.
func TestAdminReady(t *testing.T) {
	const secret = "s3cr3t-password"
	tests := []struct {
		name     string
		store    adminStore
		draining bool
		status   int
		body     probeBody
	}{
		{name: "answers", store: adminStore{}, status: 200, body: probeBody{Status: "ok"}},
		{name: "fails", store: adminStore{err: errors.New("failed to connect: password " + secret + " refused")},
			status: 503, body: probeBody{Status: "unavailable", Reason: "the store failed a list of one pet: failed to connect: password xxxxx refused"}},
		{name: "does not answer", store: adminStore{block: true},
			status: 503, body: probeBody{Status: "unavailable", Reason: "the store did not answer a list of one pet within 1s"}},
		{name: "shutting down", store: adminStore{}, draining: true,
			status: 503, body: probeBody{Status: "unavailable", Reason: "the server is shutting down and finishing the requests in flight"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.store.Store = memstore.New()
			var log bytes.Buffer
			a := &admin{metrics: http.NotFoundHandler(), store: tt.store, logger: slog.New(slog.NewTextHandler(&log, nil)),
				redact: func(s string) string { return strings.ReplaceAll(s, secret, "xxxxx") }}
			a.draining.Store(tt.draining)
			w := httptest.NewRecorder()
			start := time.Now()
			a.handler().ServeHTTP(w, httptest.NewRequest("GET", "/readyz", nil))
			took := time.Since(start)
			var got probeBody
			if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
				t.Fatalf("/readyz answered %d %q, not JSON: %v", w.Code, w.Body, err)
			}
			want := []any{tt.status, tt.body, "application/json", "no-store"}
			if diff := cmp.Diff(want, []any{w.Code, got, w.Header().Get("Content-Type"), w.Header().Get("Cache-Control")}); diff != "" {
				t.Errorf("/readyz status, body, Content-Type and Cache-Control (-want +got):\n%s", diff)
			}
			if tt.store.block && took > 10*time.Second {
				t.Errorf("/readyz took %v for a store that does not answer; want it cut off after %v", took, readyTimeout)
			}
			if strings.Contains(log.String(), secret) {
				t.Errorf("the log shows the secret:\n%s", &log)
			}
			if tt.status == 503 && !tt.draining && !strings.Contains(log.String(), "not ready") {
				t.Errorf("the log does not say that the server is not ready:\n%s", &log)
			}
		})
	}
}

// TestServeAdmin serves the admin endpoints on a free port: a second
// serveAdmin there is refused, naming the flag; once the server's context is
// done, /readyz answers 503 while /healthz still answers, and after stop the
// port is closed.
func TestServeAdmin(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout bytes.Buffer
	a := &admin{metrics: http.NotFoundHandler(), store: memstore.New(), logger: slog.New(slog.DiscardHandler),
		redact: func(s string) string { return s }}
	stop, err := serveAdmin(ctx, "127.0.0.1:0", a, &stdout)
	if err != nil {
		t.Fatal(err)
	}
	stop = sync.OnceFunc(stop)
	defer stop()
	m := adminLine.FindStringSubmatch(stdout.String())
	if m == nil {
		t.Fatalf("serveAdmin printed %q; want the admin endpoints' URL", stdout.String())
	}
	url := m[1]
	if stop, err := serveAdmin(context.Background(), strings.TrimPrefix(url, "http://"), a, io.Discard); err == nil {
		stop()
		t.Errorf("serveAdmin(%s) served on an address in use", url)
	} else if !strings.HasPrefix(err.Error(), "-admin-addr: ") {
		t.Errorf("serveAdmin on an address in use: error %q, want one starting with -admin-addr", err)
	}
	check := func(when, path string, want int) {
		t.Helper()
		if a := mustSend(t, apiRequest{method: "GET", url: url + path}); a.status != want {
			t.Errorf("%s: GET %s: %v, want %d", when, path, a, want)
		}
	}
	check("serving", "/readyz", 200)
	cancel()
	for end := time.Now().Add(5 * time.Second); !a.draining.Load() && time.Now().Before(end); { // set by a goroutine of its own
		time.Sleep(time.Millisecond)
	}
	check("shutting down", "/readyz", 503)
	check("shutting down", "/healthz", 200)
	stop()
	if err := refused(strings.TrimPrefix(url, "http://"), 5*time.Second); err != nil {
		t.Error(err)
	}
}

// TestParseConfigAdmin checks -admin-addr, -access-log, and which of the
// OpenTelemetry variables turn tracing on or are refused.
func TestParseConfigAdmin(t *testing.T) {
	type adminConfig struct {
		AdminAddr string
		AccessLog bool
		Tracing   bool
	}
	const endpoint = "http://127.0.0.1:4318"
	on := adminConfig{Tracing: true}
	grpc := "petstore sends traces over OTLP with http/protobuf only; " +
		"set it to http/protobuf, or unset it, and point the endpoint at the collector's HTTP port (4318)"
	tests := []configCase[adminConfig]{
		{name: "defaults: all off", want: adminConfig{}},
		{name: "flags", args: []string{"-admin-addr", "127.0.0.1:9090", "-access-log"},
			want: adminConfig{AdminAddr: "127.0.0.1:9090", AccessLog: true}},
		{name: "environment", env: map[string]string{adminAddrVar: ":9090"}, want: adminConfig{AdminAddr: ":9090"}},
		{name: "flag wins", args: []string{"-admin-addr", "127.0.0.1:9091"}, env: map[string]string{adminAddrVar: ":9090"},
			want: adminConfig{AdminAddr: "127.0.0.1:9091"}},
		{name: "endpoint", env: map[string]string{otlpEndpointVar: endpoint}, want: on},
		{name: "traces endpoint", env: map[string]string{otlpTracesEndpointVar: endpoint + "/v1/traces"}, want: on},
		{name: "SDK disabled", env: map[string]string{otlpEndpointVar: endpoint, otelSDKDisabledVar: "true"}},
		{name: "exporter none", env: map[string]string{otlpEndpointVar: endpoint, otelTracesExporterVar: "none"}},
		{name: "exporter otlp", env: map[string]string{otlpEndpointVar: endpoint, otelTracesExporterVar: "otlp"}, want: on},
		{name: "protocol http/protobuf", env: map[string]string{otlpEndpointVar: endpoint, otlpProtocolVar: "http/protobuf"}, want: on},
		{name: "other variables alone", env: map[string]string{otlpProtocolVar: "grpc", otelTracesExporterVar: "zipkin"}},
		{name: "exporter zipkin", env: map[string]string{otlpEndpointVar: endpoint, otelTracesExporterVar: "zipkin"},
			wantErr: "OTEL_TRACES_EXPORTER=zipkin: petstore sends traces only with otlp (or none for no traces)"},
		{name: "protocol grpc", env: map[string]string{otlpEndpointVar: endpoint, otlpProtocolVar: "grpc"},
			wantErr: "OTEL_EXPORTER_OTLP_PROTOCOL=grpc: " + grpc},
		{name: "traces protocol wins", env: map[string]string{otlpEndpointVar: endpoint, otlpProtocolVar: "grpc", otlpTracesProtocolVar: "http/protobuf"}, want: on},
		{name: "traces protocol grpc", env: map[string]string{otlpEndpointVar: endpoint, otlpProtocolVar: "http/protobuf", otlpTracesProtocolVar: "grpc"},
			wantErr: "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=grpc: " + grpc},
	}
	checkConfigs(t, tests, func(c config) adminConfig {
		return adminConfig{AdminAddr: c.adminAddr, AccessLog: c.accessLog, Tracing: c.tracing}
	})
}

// otlpCollector receives spans over OTLP/HTTP, as a collector would.
type otlpCollector struct {
	mu    sync.Mutex
	spans []*tracepb.ResourceSpans
	errs  []string
}

func (c *otlpCollector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	defer c.mu.Unlock()
	body, err := io.ReadAll(r.Body)
	if err != nil {
		c.errs = append(c.errs, err.Error())
		return
	}
	if r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" {
		c.errs = append(c.errs, "unexpected "+r.Method+" "+r.URL.Path+" with Content-Type "+r.Header.Get("Content-Type"))
		http.NotFound(w, r)
		return
	}
	var req coltracepb.ExportTraceServiceRequest
	if err := proto.Unmarshal(body, &req); err != nil {
		c.errs = append(c.errs, err.Error())
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	c.spans = append(c.spans, req.GetResourceSpans()...)
	resp, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.Write(resp)
}

// TestTraces sends the server's spans to a collector on loopback: a request
// with a traceparent gives one server span in that trace, of the service
// OTEL_SERVICE_NAME names, sent by exit, and its access log line names the
// trace and the span.
func TestTraces(t *testing.T) {
	collector := &otlpCollector{}
	srv := httptest.NewServer(collector)
	defer srv.Close()

	const key = "traces-key"
	p := startServer(t, buildServer(t), key, []string{otlpEndpointVar + "=" + srv.URL, "OTEL_SERVICE_NAME=petstore-traces-test"}, "-access-log")
	const parentTrace, parentSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	q := apiRequest{method: "POST", url: "http://" + p.addr + p.path, key: key, body: `{"name":"Rex","categoryId":1}`,
		header: map[string]string{"traceparent": "00-" + parentTrace + "-" + parentSpan + "-01"}}
	if a := mustSend(t, q); a.status != http.StatusCreated {
		t.Fatalf("POST %s: %v, want 201", q.url, a)
	}
	line := waitForAccessLines(t, p, 1)[0]

	// The batch processor sends the spans on shutdown at the latest.
	p.stop(t)

	type span struct{ Service, Name, TraceID, ParentSpanID, SpanID string }
	collector.mu.Lock()
	defer collector.mu.Unlock()
	for _, e := range collector.errs {
		t.Errorf("collector: %s", e)
	}
	var got []span
	for _, rs := range collector.spans {
		service := ""
		for _, a := range rs.GetResource().GetAttributes() {
			if a.GetKey() == "service.name" {
				service = a.GetValue().GetStringValue()
			}
		}
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				got = append(got, span{service, s.GetName(), hex.EncodeToString(s.GetTraceId()),
					hex.EncodeToString(s.GetParentSpanId()), hex.EncodeToString(s.GetSpanId())})
			}
		}
	}
	if len(got) != 1 {
		t.Fatalf("the collector received %d spans, want 1: %+v", len(got), got)
	}
	want := span{"petstore-traces-test", "createPet", parentTrace, parentSpan, got[0].SpanID}
	if diff := cmp.Diff(want, got[0]); diff != "" {
		t.Errorf("the span received (-want +got):\n%s", diff)
	}
	if line.TraceID != parentTrace || !strings.Contains(p.stderr.String(), "span_id="+got[0].SpanID) {
		t.Errorf("the access log line does not name trace %s and span %s:\n%s", parentTrace, got[0].SpanID, p.stderr)
	}
}

// TestNewObservability checks what each setting turns on: with nothing on
// there is no observer, so that the handler spends nothing on observing,
// and the span middleware is there only when traces are sent.
func TestNewObservability(t *testing.T) {
	t.Setenv(otlpEndpointVar, "http://127.0.0.1:1") // read by the OTLP exporter; nothing is sent in this test
	type setup struct {
		Observer, Metrics, Middleware bool
		Closers                       int
	}
	tests := []struct {
		name             string
		metrics, tracing bool
		accessLog        bool
		want             setup
	}{
		{name: "nothing", want: setup{}},
		{name: "access log", accessLog: true, want: setup{Observer: true}},
		{name: "metrics", metrics: true, want: setup{Observer: true, Metrics: true, Closers: 1}},
		{name: "traces", tracing: true, want: setup{Observer: true, Middleware: true, Closers: 1}},
		{name: "everything", metrics: true, tracing: true, accessLog: true,
			want: setup{Observer: true, Metrics: true, Middleware: true, Closers: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := newObservability(context.Background(), tt.metrics, tt.tracing, tt.accessLog, slog.New(slog.DiscardHandler))
			if err != nil {
				t.Fatal(err)
			}
			closers := len(o.closers)
			defer func() {
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				defer cancel()
				o.close(ctx) // the exporter cannot reach its endpoint; what matters is that it stops
			}()
			api := http.Handler(&struct{ http.Handler }{http.NotFoundHandler()}) // comparable
			got := setup{
				Observer:   len(o.options) > 0,
				Metrics:    o.metrics != nil,
				Middleware: o.wrap(api) != api,
				Closers:    closers,
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("newObservability(metrics %v, tracing %v, access log %v) (-want +got):\n%s",
					tt.metrics, tt.tracing, tt.accessLog, diff)
			}
			if len(o.options) > 1 {
				t.Errorf("%d options; want one observer at most", len(o.options))
			}
		})
	}
}
