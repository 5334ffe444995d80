package otelpetstore_test

import (
	"bufio"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/trace"

	"github.com/petstore-go/petstore/memstore"
	"github.com/petstore-go/petstore/otelpetstore"
)

// ObserveWatch counts the streams open and the events sent.
func TestObserveWatch(t *testing.T) {
	f := newFixture(t, memstore.New())
	counts := func() map[string]int64 {
		got := map[string]int64{}
		for _, sm := range f.collect(t).ScopeMetrics {
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
	req, _ := http.NewRequest(http.MethodGet, f.url+"/v1/pets", nil)
	req.Header.Set("Authorization", "Bearer "+keyA)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if got := f.call(t, "POST", "/v1/pets", keyA, `{"name":"a","categoryId":1}`, trace.TraceID{}); got != 201 {
			t.Fatalf("create: status %d", got)
		}
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
