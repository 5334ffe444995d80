package otelpetstore_test

import (
	"context"
	"fmt"
	"log"
	"net/http/httptest"
	"slices"
	"strings"

	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/memstore"
	"github.com/petstore-go/petstore/otelpetstore"
)

// Example serves a few requests through a handler with telemetry and prints
// what a metric reader collects: the requests by method, route and status,
// and who called the deprecated getPet.
func Example() {
	reader := sdkmetric.NewManualReader()
	meters := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	tracers := sdktrace.NewTracerProvider()
	defer func() { _ = tracers.Shutdown(context.Background()) }()

	tel, err := otelpetstore.New(
		otelpetstore.WithMeterProvider(meters),
		otelpetstore.WithTracerProvider(tracers),
		otelpetstore.WithPropagator(propagation.TraceContext{}),
	)
	if err != nil {
		log.Fatal(err)
	}
	api, err := petstore.New(
		petstore.WithStore(memstore.New()),
		petstore.WithAuthenticator(petstore.APIKeys("example-key")),
		petstore.WithObserver(tel.Observe),
	)
	if err != nil {
		log.Fatal(err)
	}
	h := tel.Middleware(api)

	for _, q := range []struct{ method, path, key, body string }{
		{"POST", "/v1/pets", "example-key", `{"name":"Rex","categoryId":1}`},
		{"GET", "/v1/pets", "example-key", ""},
		{"GET", "/v1/pets", "example-key", ""},
		{"GET", "/v1/pets/1", "example-key", ""},
		{"GET", "/v1/pets/1", "wrong-key", ""},
	} {
		r := httptest.NewRequest(q.method, q.path, strings.NewReader(q.body))
		r.Header.Set("Authorization", "Bearer "+q.key)
		r.Header.Set("Content-Type", "application/json")
		h.ServeHTTP(httptest.NewRecorder(), r)
	}

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		log.Fatal(err)
	}
	var lines []string
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch data := m.Data.(type) {
			case metricdata.Histogram[float64]:
				for _, p := range data.DataPoints {
					method, _ := p.Attributes.Value("http.request.method")
					route, _ := p.Attributes.Value("http.route")
					status, _ := p.Attributes.Value("http.response.status_code")
					lines = append(lines, fmt.Sprintf("%s %s %s %d: %d",
						m.Name, method.AsString(), route.AsString(), status.AsInt64(), p.Count))
				}
			case metricdata.Sum[int64]:
				for _, p := range data.DataPoints {
					principal, _ := p.Attributes.Value(otelpetstore.PrincipalKey)
					lines = append(lines, fmt.Sprintf("%s %s: %d", m.Name, principal.AsString(), p.Value))
				}
			}
		}
	}
	slices.Sort(lines)
	fmt.Println(strings.Join(lines, "\n"))

	// Output:
	// http.server.request.duration GET /v1/pets 200: 2
	// http.server.request.duration GET /v1/pets/{petId} 200: 1
	// http.server.request.duration GET /v1/pets/{petId} 401: 1
	// http.server.request.duration POST /v1/pets 201: 1
	// petstore.deprecated.requests key-c018c41c1afaf2c0: 1
}
