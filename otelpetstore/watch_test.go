package otelpetstore_test

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/memstore"
	"github.com/petstore-go/petstore/otelpetstore"
)

// ObserveWatch counts the streams open and the events sent.
func TestObserveWatch(t *testing.T) {
	reader := metric.NewManualReader()
	tel, err := otelpetstore.New(otelpetstore.WithMeterProvider(metric.NewMeterProvider(metric.WithReader(reader))))
	if err != nil {
		t.Fatal(err)
	}
	api, err := petstore.New(petstore.WithStore(memstore.New()), petstore.WithAuthenticator(petstore.APIKeys(keyA)),
		petstore.WithWatch(petstore.Watch{Observe: tel.ObserveWatch}))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	counts := func() map[string]int64 {
		var rm metricdata.ResourceMetrics
		if err := reader.Collect(context.Background(), &rm); err != nil {
			t.Fatal(err)
		}
		got := map[string]int64{}
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				if sum, ok := m.Data.(metricdata.Sum[int64]); ok && strings.HasPrefix(m.Name, "petstore.watch.") {
					for _, p := range sum.DataPoints {
						got[m.Name] += p.Value
					}
				}
			}
		}
		return got
	}
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/v1/pets", nil)
	req.Header.Set("Authorization", "Bearer "+keyA)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		post, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/pets", strings.NewReader(`{"name":"a","categoryId":1}`))
		post.Header.Set("Authorization", "Bearer "+keyA)
		post.Header.Set("Content-Type", "application/json")
		r, err := http.DefaultClient.Do(post)
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
	}
	for lines, events := bufio.NewScanner(resp.Body), 0; events < 2 && lines.Scan(); {
		if strings.HasPrefix(lines.Text(), "id: ") {
			events++
		}
	}
	// An event is counted after it is written, so the count may trail what
	// the stream has delivered: wait for it rather than read it at once.
	await := func(when string, want map[string]int64) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); cmp.Diff(want, counts()) != ""; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s (-want +got):\n%s", when, cmp.Diff(want, counts()))
			}
		}
	}
	await("with a stream open", map[string]int64{otelpetstore.WatchStreamsName: 1, otelpetstore.WatchEventsName: 2})
	resp.Body.Close()
	await("once the stream ended", map[string]int64{otelpetstore.WatchStreamsName: 0, otelpetstore.WatchEventsName: 2})
}
