package petstore_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/httpapi"
	"github.com/petstore-go/petstore/internal/testkit/wirecases"
	"github.com/petstore-go/petstore/memstore"
)

// An event is one event of a watch stream.
type event struct{ ID, Data string }

// A watcher reads the events of one watch stream.
type watcher struct {
	resp *http.Response
	r    *bufio.Reader
}

// watch opens a watch of the pets at target (under srv's /v1/pets) with
// header, and checks that it is answered 200 text/event-stream.
func watch(t *testing.T, srv *httptest.Server, target string, header http.Header) *watcher {
	t.Helper()
	resp := watchRequest(t, srv, target, header)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Fatalf("watch %s: %d %s %s", target, resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	w := &watcher{resp: resp, r: bufio.NewReader(resp.Body)}
	t.Cleanup(w.close)
	return w
}

// watchRequest sends a watch request and returns its response.
func watchRequest(t *testing.T, srv *httptest.Server, target string, header http.Header) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+"/v1/pets"+target, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+testKey)
	req.Header.Set("Accept", "text/event-stream")
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func (w *watcher) close() { w.resp.Body.Close() }

// next returns the next event, and how many comments came before it. It
// returns an error when the stream ends.
func (w *watcher) next() (event, int, error) {
	var e event
	comments := 0
	for {
		line, err := w.r.ReadString('\n')
		if err != nil {
			return e, comments, err
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "" && e.ID != "":
			return e, comments, nil
		case line == "":
		case strings.HasPrefix(line, ":"):
			comments++
		case strings.HasPrefix(line, "id: "):
			e.ID = line[len("id: "):]
		case strings.HasPrefix(line, "data: "):
			e.Data = line[len("data: "):]
		default:
			return e, comments, errors.New("unexpected line " + strconv.Quote(line))
		}
	}
}

// events reads n events.
func (w *watcher) events(t *testing.T, n int) []event {
	t.Helper()
	var got []event
	for range n {
		e, _, err := w.next()
		if err != nil {
			t.Fatalf("after %d events: %v", len(got), err)
		}
		got = append(got, e)
	}
	return got
}

// eventsOf returns the events of pets: each pet's ID, and its JSON as GET
// /pets/{petId} answers it.
func eventsOf(t *testing.T, h http.Handler, pets []petstore.Pet) []event {
	t.Helper()
	var want []event
	for _, p := range pets {
		id := strconv.FormatInt(p.ID, 10)
		w := serve(h, newRequest(t, http.MethodGet, "/v1/pets/"+id, "", nil))
		if w.Code != http.StatusOK {
			t.Fatalf("GET pet %s: %d", id, w.Code)
		}
		want = append(want, event{ID: id, Data: w.Body.String()})
	}
	return want
}

// create adds p through h, as a client would.
func create(t testing.TB, h http.Handler, p petstore.NewPet) petstore.Pet {
	t.Helper()
	w := serve(h, newRequest(t, http.MethodPost, "/v1/pets", marshal(t, p), nil))
	if w.Code != http.StatusCreated {
		t.Fatalf("create: %d %s", w.Code, w.Body)
	}
	return petstore.Pet{ID: mustID(t, w.Header().Get("Location")), NewPet: p}
}

func mustID(t testing.TB, location string) int64 {
	t.Helper()
	id, err := strconv.ParseInt(strings.TrimPrefix(location, "pets/"), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// A watch sends the pets after its cursor (or Last-Event-ID, which wins),
// then each pet created, each as GET /pets/{petId} gives it, only those of
// its status filter.
func TestWatchEvents(t *testing.T) {
	seeded := wirecases.Seeded()
	tests := []struct {
		name   string
		target string
		header http.Header
		status petstore.Status
		after  int64
	}{
		{name: "all", target: ""},
		{name: "cursor", target: "?cursor=" + string(petstore.AppendCursor(nil, 3)), after: 3},
		{name: "status", target: "?status=sold", status: petstore.StatusSold},
		{name: "Last-Event-ID", target: "?cursor=" + string(petstore.AppendCursor(nil, 3)),
			header: http.Header{"Last-Event-Id": {"5"}}, after: 5},
		{name: "Last-Event-ID and status", target: "?status=available&limit=1",
			header: http.Header{"Last-Event-Id": {"1"}}, status: petstore.StatusAvailable, after: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newEnv(t, petstore.WithWatch(petstore.Watch{Poll: time.Hour}))
			srv := httptest.NewServer(env.h)
			t.Cleanup(srv.Close) // after the watches' cleanups, which end them
			selected := func(pets []petstore.Pet) []petstore.Pet {
				var out []petstore.Pet
				for _, p := range pets {
					if p.ID > tt.after && (tt.status == "" || p.Status == tt.status) {
						out = append(out, p)
					}
				}
				return out
			}
			w := watch(t, srv, tt.target, tt.header)
			want := eventsOf(t, env.h, selected(seeded))
			if diff := cmp.Diff(want, w.events(t, len(want))); diff != "" {
				t.Errorf("the stored pets (-want +got):\n%s", diff)
			}
			var created []petstore.Pet
			for _, st := range []petstore.Status{petstore.StatusPending, "", petstore.StatusSold, petstore.StatusAvailable} {
				created = append(created, create(t, env.h, petstore.NewPet{Name: "new " + string(st), CategoryID: 1, Status: st}))
			}
			want = eventsOf(t, env.h, selected(created))
			if diff := cmp.Diff(want, w.events(t, len(want))); diff != "" {
				t.Errorf("the created pets (-want +got):\n%s", diff)
			}
		})
	}
}

// A client that asks for JSON, or for a stream with q=0, gets a page, and
// HEAD of a watch gets its headers alone.
func TestWatchNegotiation(t *testing.T) {
	env := newEnv(t)
	for _, accept := range []string{"application/json", "*/*", "text/event-stream;q=0", "text/event-stream; q=0.0"} {
		w := env.serve(newRequest(t, http.MethodGet, "/v1/pets?limit=2", "", http.Header{"Accept": {accept}}))
		if got := w.Header().Get("Content-Type"); w.Code != http.StatusOK || got != "application/json" {
			t.Errorf("Accept: %s: %d %s, want 200 application/json", accept, w.Code, got)
		}
	}
	for _, accept := range []string{"text/event-stream", "application/json;q=0.5, TEXT/EVENT-STREAM;q=0.9"} {
		w := env.serve(newRequest(t, http.MethodHead, "/v1/pets", "", http.Header{"Accept": {accept}}))
		want := http.Header{"Content-Type": {"text/event-stream"}, "Cache-Control": {"no-store"}, "X-Content-Type-Options": {"nosniff"}}
		if diff := cmp.Diff(want, w.Header()); w.Code != http.StatusOK || diff != "" || w.Body.Len() != 0 {
			t.Errorf("HEAD with Accept: %s: %d, body %q, headers (-want +got):\n%s", accept, w.Code, w.Body, diff)
		}
	}
}

// A watch is refused as a list is, and over the caps with 429
// rate_limited and Retry-After.
func TestWatchRefused(t *testing.T) {
	env := newEnv(t, petstore.WithWatch(petstore.Watch{MaxStreams: 2, MaxStreamsPerPrincipal: 1}),
		petstore.WithAuthenticator(petstore.APIKeys(testKey, "other-key-0123456789", "third-key-0123456789")))
	srv := httptest.NewServer(env.h)
	t.Cleanup(srv.Close) // after the watches' cleanups, which end them
	refused := func(target string, header http.Header, status int, code httpapi.Code, retry bool) {
		t.Helper()
		resp := watchRequest(t, srv, target, header)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != status || !strings.Contains(string(b), `"code":"`+string(code)+`"`) || (resp.Header.Get("Retry-After") == "1") != retry {
			t.Errorf("%s %v: %d %s Retry-After %q, want %d %s", target, header, resp.StatusCode, b, resp.Header.Get("Retry-After"), status, code)
		}
	}
	refused("", http.Header{"Authorization": {"Bearer wrong"}}, 401, httpapi.CodeUnauthorized, false)
	refused("?status=lost", nil, 400, httpapi.CodeInvalidParameter, false)
	for _, id := range []string{"x", "-1", "1.5", "99999999999999999999"} {
		refused("", http.Header{"Last-Event-Id": {id}}, 400, httpapi.CodeInvalidParameter, false)
	}
	first := watch(t, srv, "", nil)
	refused("", nil, 429, httpapi.CodeRateLimited, true) // the principal's one stream
	watch(t, srv, "", http.Header{"Authorization": {"Bearer other-key-0123456789"}})
	refused("", http.Header{"Authorization": {"Bearer third-key-0123456789"}}, 429, httpapi.CodeRateLimited, true) // the server's two
	first.close()
	waitFor(t, "the first stream's place to free", func() bool {
		resp := watchRequest(t, srv, "", nil)
		defer resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}

// waitFor polls cond until it holds, or fails the test after 10 seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// A silent stream sends heartbeats, and closing Watch.Done ends every
// stream and refuses new ones with 503.
func TestWatchHeartbeatAndDone(t *testing.T) {
	done := make(chan struct{})
	env := newEnv(t, petstore.WithWatch(petstore.Watch{Heartbeat: 20 * time.Millisecond, Done: done}))
	srv := httptest.NewServer(env.h)
	t.Cleanup(srv.Close) // after the watches' cleanups, which end them
	w := watch(t, srv, "?cursor="+string(petstore.AppendCursor(nil, 1000)), nil)
	create(t, env.h, petstore.NewPet{Name: "before the cursor", CategoryID: 1})
	go func() {
		time.Sleep(200 * time.Millisecond)
		close(done)
	}()
	_, comments, err := w.next()
	if !errors.Is(err, io.EOF) || comments < 3 {
		t.Errorf("the stream ended with %v after %d comments; want io.EOF after several heartbeats", err, comments)
	}
	resp := watchRequest(t, srv, "", nil)
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Errorf("a watch after Done: %d, Retry-After %q; want 503 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
}

// hidingStore is a host's store that hides the pets named "secret ..."
// from List, from every caller.
type hidingStore struct{ petstore.Store }

var _ petstore.Store = hidingStore{}

func (s hidingStore) List(ctx context.Context, opts petstore.ListOptions) ([]petstore.Pet, error) {
	pets, err := s.Store.List(ctx, opts)
	out := pets[:0]
	for _, p := range pets {
		if !strings.HasPrefix(p.Name, "secret") {
			out = append(out, p)
		}
	}
	return out, err
}

// A watch reads through the Store's List, so a host's List decides what
// it shows, in the stored pets and in those created later.
func TestWatchReadsThroughList(t *testing.T) {
	store := memstore.New()
	h := newHandler(t, hidingStore{store})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close) // after the watches' cleanups, which end them
	var shown []petstore.Pet
	add := func(name string) {
		p := create(t, h, petstore.NewPet{Name: name, CategoryID: 1})
		if !strings.HasPrefix(name, "secret") {
			shown = append(shown, p)
		}
	}
	add("a")
	add("secret b")
	w := watch(t, srv, "", nil)
	add("secret c")
	add("d")
	want := eventsOf(t, h, shown)
	if diff := cmp.Diff(want, w.events(t, len(want))); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// Watch.Observe sees streams open and end and the events sent.
func TestWatchObserve(t *testing.T) {
	var mu sync.Mutex
	var got []petstore.WatchObservation
	observe := func(_ context.Context, o petstore.WatchObservation) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, o)
	}
	env := newEnv(t, petstore.WithWatch(petstore.Watch{Observe: observe}))
	srv := httptest.NewServer(env.h)
	t.Cleanup(srv.Close) // after the watches' cleanups, which end them
	w := watch(t, srv, "?cursor="+string(petstore.AppendCursor(nil, int64(len(wirecases.Seed())-2))), nil)
	w.events(t, 2)
	create(t, env.h, petstore.NewPet{Name: "new", CategoryID: 1})
	w.events(t, 1)
	w.close()
	waitFor(t, "the stream to end", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(got) > 0 && got[len(got)-1].Streams == -1
	})
	want := []petstore.WatchObservation{{Streams: 1}, {Events: 2}, {Events: 1}, {Streams: -1}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// countingStore counts the calls of List.
type countingStore struct {
	petstore.Store
	lists atomic.Int64
}

var _ petstore.Store = (*countingStore)(nil)

func (s *countingStore) List(ctx context.Context, opts petstore.ListOptions) ([]petstore.Pet, error) {
	s.lists.Add(1)
	return s.Store.List(ctx, opts)
}
