package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/memstore"
)

// logLines is a JSON log that tests read while handlers write to it.
type logLines struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (l *logLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// records returns every record of the log.
func (l *logLines) records(t *testing.T) []map[string]any {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	var recs []map[string]any
	for line := range strings.Lines(l.buf.String()) {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		recs = append(recs, rec)
	}
	return recs
}

// windows stands in for time.AfterFunc: it keeps the functions that end
// access log windows, for the test to call.
type windows struct {
	mu  sync.Mutex
	fns []func()
}

// add is an afterFunc that keeps f.
func (w *windows) add(_ time.Duration, f func()) *time.Timer {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.fns = append(w.fns, f)
	return nil
}

// endAll ends every window started so far.
func (w *windows) endAll() {
	w.mu.Lock()
	fns := w.fns
	w.fns = nil
	w.mu.Unlock()
	for _, f := range fns {
		f()
	}
}

// summary is what a test compares of a log record.
func summary(rec map[string]any) string {
	if rec["msg"] == "petstore: more like this" {
		return fmt.Sprintf("%v more like %v %v", rec["count"], rec["status"], rec["route"])
	}
	return fmt.Sprintf("%v %v %v", rec["method"], rec["status"], rec["route"])
}

// TestAccessLogCountsAbuse: past the burst, a connection's client errors
// are counted and logged as one line when the window ends; its successes,
// its 5xx answers and another connection's errors are logged as they come,
// and a new window logs again.
func TestAccessLogCountsAbuse(t *testing.T) {
	var log logLines
	var w windows
	a := newAccessLog(slog.New(slog.NewJSONHandler(&log, nil)), 3, time.Minute, w.add)
	abuser := context.WithValue(context.Background(), connBodiesKey{}, &connBodies{})
	other := context.WithValue(context.Background(), connBodiesKey{}, &connBodies{})
	notFound := petstore.Observation{Method: "GET", Route: "/v1/pets/{petId}", Status: 404, Code: "not_found"}
	gone := petstore.Observation{Method: "GET", Route: "/v1/pets", Status: 499, Code: petstore.CodeClientClosedRequest}
	ok := petstore.Observation{Method: "GET", Route: "/v1/pets", Status: 200}
	failed := petstore.Observation{Method: "GET", Route: "/v1/pets", Status: 503, Code: "unavailable"}

	for range 5 {
		a.observe(abuser, notFound)
	}
	a.observe(abuser, ok)
	for range 20 {
		a.observe(abuser, gone)
	}
	a.observe(abuser, failed)
	a.observe(other, notFound)
	a.observe(abuser, ok)
	a.observe(context.Background(), notFound) // no connection known: logged
	w.endAll()
	a.observe(abuser, notFound) // a new window
	w.endAll()

	var got []string
	for _, rec := range log.records(t) {
		got = append(got, summary(rec))
	}
	want := []string{
		"GET 404 /v1/pets/{petId}", "GET 404 /v1/pets/{petId}", "GET 404 /v1/pets/{petId}",
		"GET 200 /v1/pets",
		"GET 503 /v1/pets",
		"GET 404 /v1/pets/{petId}", // the other connection
		"GET 200 /v1/pets",
		"GET 404 /v1/pets/{petId}", // no connection
		"22 more like 499 /v1/pets",
		"GET 404 /v1/pets/{petId}", // the next window
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("access log (-want +got):\n%s", diff)
	}
	if n := len(a.conns); n != 0 {
		t.Errorf("%d connections kept after their windows ended, want 0", n)
	}
}

// TestAccessLogServedAbuse serves the API on a real connection with the
// access log: a client that sends requests with a 4,000-byte method gets
// the burst logged, with the method cut, the rest counted in one line, and
// its normal request after them logged.
func TestAccessLogServedAbuse(t *testing.T) {
	var log logLines
	var w windows
	a := newAccessLog(slog.New(slog.NewJSONHandler(&log, nil)), accessLogBurst, accessLogWindow, w.add)
	const key = "access-log-key"
	api, err := petstore.New(petstore.WithStore(memstore.New()), petstore.WithAuthenticator(petstore.APIKeys(key)),
		petstore.WithObserver(a.observe))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(api)
	srv.Config.ConnContext = withConnBodies
	srv.Start()
	defer srv.Close()
	client := srv.Client()

	method := strings.Repeat("G", 4000)
	send := func(method string) int {
		t.Helper()
		req, err := http.NewRequest(method, srv.URL+"/v1/pets", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if len(body) > 400 { // the 405 with its type and title, and the method cut to 64 bytes
			t.Errorf("%d-byte answer to a %d-byte method: %s", len(body), len(method), body)
		}
		return resp.StatusCode
	}
	const abuse = 50
	for range abuse {
		if got := send(method); got != http.StatusMethodNotAllowed {
			t.Fatalf("status %d, want 405", got)
		}
	}
	if got := send(http.MethodGet); got != http.StatusOK {
		t.Fatalf("status %d, want 200", got)
	}
	w.endAll()

	recs := log.records(t)
	cut := strings.Repeat("G", 64) + "…[4000 bytes]"
	var got []string
	for _, rec := range recs {
		if m, _ := rec["method"].(string); m != cut && m != http.MethodGet {
			t.Errorf("method logged as %q, want %q or GET", m, cut)
		}
		got = append(got, summary(rec))
	}
	var want []string
	for range accessLogBurst {
		want = append(want, cut+" 405 /v1/pets")
	}
	want = append(want, "GET 200 /v1/pets", fmt.Sprintf("%d more like 405 /v1/pets", abuse-accessLogBurst))
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("access log (-want +got):\n%s", diff)
	}
}
