package main

import (
	"context"
	"encoding/hex"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

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
			var accessLog *slog.Logger
			if tt.accessLog {
				accessLog = slog.New(slog.DiscardHandler)
			}
			o, err := newObservability(context.Background(), tt.metrics, tt.tracing, accessLog)
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
