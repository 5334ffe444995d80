package petstore_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/internal/faultstore"
	"github.com/petstore-go/petstore/memstore"
)

// deadlineLog is a logger at debug level whose records a test can read.
type deadlineLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *deadlineLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *deadlineLog) logger() *slog.Logger {
	return slog.New(slog.NewJSONHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// records returns the level, message and operation of each record.
func (l *deadlineLog) records(t *testing.T) []string {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(l.buf.String()), "\n") {
		if line == "" {
			continue
		}
		var rec struct{ Level, Msg, Operation string }
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		out = append(out, rec.Level+" "+rec.Msg+" "+rec.Operation)
	}
	return out
}

func deadlineRequest(ctx context.Context, method, target string) *http.Request {
	var body *strings.Reader
	if method == http.MethodPost {
		body = strings.NewReader(`{"name":"Rex","categoryId":7}`)
	} else {
		body = strings.NewReader("")
	}
	r := httptest.NewRequestWithContext(ctx, method, target, body)
	r.Header.Set("Authorization", "Bearer key")
	r.Header.Set("Content-Type", "application/json")
	return r
}

// TestStoreTimeout checks that a store call that outlives WithStoreTimeout
// is answered 503 with Retry-After and logged at WARN with its operation,
// and that a create answered so has stored nothing.
func TestStoreTimeout(t *testing.T) {
	for _, c := range []struct {
		method, target string
		m              faultstore.Method
		op             petstore.Operation
	}{
		{http.MethodGet, "/v1/pets", faultstore.List, petstore.OpListPets},
		{http.MethodPost, "/v1/pets", faultstore.Add, petstore.OpCreatePet},
		{http.MethodGet, "/v1/pets/1", faultstore.Get, petstore.OpGetPet},
	} {
		t.Run(string(c.op), func(t *testing.T) {
			inner := memstore.New()
			if _, _, err := inner.Add(t.Context(), petstore.NewPet{Name: "Tom", CategoryID: 1}, petstore.AddOptions{}); err != nil {
				t.Fatal(err)
			}
			fs := faultstore.New(inner)
			fs.Set(c.m, faultstore.Fault{Delay: time.Hour}) // stalls until its context is done
			var log deadlineLog
			h, err := petstore.New(petstore.WithStore(fs), petstore.WithAuthenticator(petstore.APIKeys("key")),
				petstore.WithStoreTimeout(20*time.Millisecond), petstore.WithLogger(log.logger()))
			if err != nil {
				t.Fatal(err)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, deadlineRequest(t.Context(), c.method, c.target))
			got := map[string]any{"status": w.Code, "retry": w.Header().Get("Retry-After"), "log": log.records(t)}
			want := map[string]any{"status": 503, "retry": "1", "log": []string{"WARN petstore: store timed out " + string(c.op)}}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if n := inner.Len(); n != 1 {
				t.Errorf("the store holds %d pets after the request, want the 1 it held", n)
			}
		})
	}
}

// blockingAdd is a Store whose Add waits for release, then reports the
// state of its context and adds the pet to a memstore.
type blockingAdd struct {
	*memstore.Store
	entered, release chan struct{}
	ctxErr           chan error
}

func (s blockingAdd) Add(ctx context.Context, p petstore.NewPet, opts petstore.AddOptions) (petstore.Pet, bool, error) {
	close(s.entered)
	<-s.release
	s.ctxErr <- ctx.Err()
	return s.Store.Add(ctx, p, opts)
}

// TestCreateOutlivesItsClient checks that a create that has reached the
// store runs to completion when its client hangs up, and that nothing is
// logged above debug for it.
func TestCreateOutlivesItsClient(t *testing.T) {
	store := blockingAdd{memstore.New(), make(chan struct{}), make(chan struct{}), make(chan error, 1)}
	var log deadlineLog
	h, err := petstore.New(petstore.WithStore(store), petstore.WithAuthenticator(petstore.APIKeys("key")),
		petstore.WithLogger(log.logger()))
	if err != nil {
		t.Fatal(err)
	}
	ctx, hangUp := context.WithCancel(t.Context())
	served := make(chan int)
	go func() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, deadlineRequest(ctx, http.MethodPost, "/v1/pets"))
		served <- w.Code
	}()
	<-store.entered
	hangUp()
	close(store.release)
	if err := <-store.ctxErr; err != nil {
		t.Errorf("the store's context was done (%v) when the client hung up; the create must run to completion", err)
	}
	if code := <-served; code != http.StatusCreated {
		t.Errorf("status %d, want 201 (written to nobody)", code)
	}
	if n := store.Len(); n != 1 {
		t.Errorf("the store holds %d pets, want the 1 created", n)
	}
	if recs := log.records(t); len(recs) != 0 {
		t.Errorf("logged %q for a create whose client hung up", recs)
	}
}

// TestClientGoneIsNotAnOutage checks that a request whose client hung up
// before the store was called is logged at debug as such, never at WARN as
// a store outage, and does not reach the store.
func TestClientGoneIsNotAnOutage(t *testing.T) {
	for _, target := range []string{"/v1/pets", "/v1/pets/1"} {
		fs := faultstore.New(memstore.New())
		var log deadlineLog
		h, err := petstore.New(petstore.WithStore(fs), petstore.WithAuthenticator(petstore.APIKeys("key")),
			petstore.WithLogger(log.logger()))
		if err != nil {
			t.Fatal(err)
		}
		ctx, hangUp := context.WithCancel(t.Context())
		hangUp()
		h.ServeHTTP(httptest.NewRecorder(), deadlineRequest(ctx, http.MethodGet, target))
		op := petstore.OpListPets
		if target != "/v1/pets" {
			op = petstore.OpGetPet
		}
		if diff := cmp.Diff([]string{"DEBUG petstore: client went away " + string(op)}, log.records(t)); diff != "" {
			t.Errorf("GET %s: log (-want +got):\n%s", target, diff)
		}
		if n := fs.TotalCalls(); n != 0 {
			t.Errorf("GET %s: the store was called %d times for a client that had gone", target, n)
		}
	}
}
