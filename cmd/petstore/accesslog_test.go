package main

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/memstore"
)

// lockedBuffer is a log that tests read after handlers write to it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestAccessLogEveryRequest serves the API on a real connection with the
// access log: a client that sends requests with a 4,000-byte method has
// each of them logged, with the method cut, and so is its normal request
// after them.
func TestAccessLogEveryRequest(t *testing.T) {
	var log lockedBuffer
	const key = "access-log-key"
	api, err := petstore.New(petstore.WithStore(memstore.New()), petstore.WithAuthenticator(petstore.APIKeys(key)),
		petstore.WithObserver(accessLogObserver(slog.New(slog.NewJSONHandler(&log, nil)))))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api)
	defer srv.Close()

	send := func(method string) {
		t.Helper()
		req, err := http.NewRequest(method, srv.URL+"/v1/pets", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	method := strings.Repeat("G", 4000)
	const abuse = 20
	for range abuse {
		send(method)
	}
	send(http.MethodGet)

	cut := strings.Repeat("G", 64) + "…[4000 bytes]"
	var want, got []string
	for range abuse {
		want = append(want, cut+" 405")
	}
	want = append(want, "GET 200")
	for line := range strings.Lines(log.String()) {
		var rec struct {
			Method string
			Status int
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		got = append(got, rec.Method+" "+strconv.Itoa(rec.Status))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("access log (-want +got):\n%s", diff)
	}
}
