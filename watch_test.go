package petstore_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/httpapi"
	"github.com/petstore-go/petstore/internal/testkit/watchbench"
	"github.com/petstore-go/petstore/internal/wire"
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
// /pets/{petId} answers it, without the body's final newline, which ends
// the data line.
func eventsOf(t *testing.T, h http.Handler, pets []petstore.Pet) []event {
	t.Helper()
	var want []event
	for _, p := range pets {
		id := strconv.FormatInt(p.ID, 10)
		w := serve(h, newRequest(t, http.MethodGet, "/v1/pets/"+id, "", nil))
		if w.Code != http.StatusOK {
			t.Fatalf("GET pet %s: %d", id, w.Code)
		}
		want = append(want, event{ID: id, Data: strings.TrimSuffix(w.Body.String(), "\n")})
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
	return decode[petstore.Pet](t, w)
}

// A watch sends the pets after its cursor (or Last-Event-ID, which wins),
// then each pet created, each as GET /pets/{petId} gives it, only those of
// its status filter.
func TestWatchEvents(t *testing.T) {
	seeded := snapshot(t, seededStore(t)) // the pets of every newEnv
	tests := []struct {
		name   string
		target string
		header http.Header
		status petstore.Status
		after  int64
	}{
		{name: "all", target: ""},
		{name: "cursor", target: "?cursor=" + string(wire.AppendCursor(nil, 3)), after: 3},
		{name: "status", target: "?status=sold", status: petstore.StatusSold},
		{name: "Last-Event-ID", target: "?cursor=" + string(wire.AppendCursor(nil, 3)),
			header: http.Header{"Last-Event-Id": {"5"}}, after: 5},
		{name: "Last-Event-ID and status", target: "?status=available&limit=1",
			header: http.Header{"Last-Event-Id": {"1"}}, status: petstore.StatusAvailable, after: 1},
		// A watch resumes from any ID that a stream may send, up to the greatest.
		{name: "Last-Event-ID 0", header: http.Header{"Last-Event-Id": {"0"}}},
		{name: "Last-Event-ID of the greatest ID but one", header: http.Header{"Last-Event-Id": {"9223372036854775806"}}, after: math.MaxInt64 - 1},
		{name: "Last-Event-ID of the greatest ID", header: http.Header{"Last-Event-Id": {"9223372036854775807"}}, after: math.MaxInt64},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newEnv(t, petstore.WithWatch(petstore.Watch{Poll: time.Hour}))
			srv := newServer(t, env.h)
			selected := func(pets []petstore.Pet) []petstore.Pet {
				return slices.DeleteFunc(slices.Clone(pets), func(p petstore.Pet) bool {
					return p.ID <= tt.after || tt.status != "" && p.Status != tt.status
				})
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

// HEAD of a watch gets its headers alone. (TestWire checks that a client
// that asks for JSON, or for a stream with q=0, gets a page.)
func TestWatchNegotiation(t *testing.T) {
	env := newEnv(t)
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
	srv := newServer(t, env.h)
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
	for _, id := range []string{"x", "-1", "+1", "1.5", "", "9223372036854775808", "99999999999999999999"} {
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
	srv := newServer(t, env.h)
	w := watch(t, srv, "?cursor="+string(wire.AppendCursor(nil, 1000)), nil)
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

// tenantStore embeds a memstore the ordinary Go way, so that every method
// of memstore is promoted, and overrides List to hide the pets named
// "secret ..." from every caller, as a host hiding another tenant's pets
// would.
type tenantStore struct{ *memstore.Store }

var _ petstore.Store = tenantStore{}

func (s tenantStore) List(ctx context.Context, opts petstore.ListOptions) ([]petstore.Pet, error) {
	pets, err := s.Store.List(ctx, petstore.ListOptions{Status: opts.Status, After: opts.After})
	pets = slices.DeleteFunc(pets, func(p petstore.Pet) bool { return strings.HasPrefix(p.Name, "secret") })
	if opts.Limit > 0 && len(pets) > opts.Limit {
		pets = pets[:opts.Limit]
	}
	return pets, err
}

// The handler reads through the Store's own List, not through any method
// promoted from memstore, so a host's List decides what it shows: in a page,
// and in a watch, of the stored pets and of those created later.
func TestStoreOverrideServed(t *testing.T) {
	store := tenantStore{memstore.New()}
	h := newHandler(t, store)
	srv := newServer(t, h)
	var shown []petstore.Pet
	add := func(name string) {
		p := create(t, h, petstore.NewPet{Name: name, CategoryID: 1})
		if !strings.HasPrefix(name, "secret") {
			shown = append(shown, p)
		}
	}
	add("a")
	add("secret b")
	add("c")
	for _, target := range []string{"/v1/pets", "/v1/pets?limit=2"} {
		w := serve(h, newRequest(t, http.MethodGet, target, "", nil))
		if diff := cmp.Diff(shown, decode[[]petstore.Pet](t, w)); w.Code != http.StatusOK || diff != "" {
			t.Errorf("GET %s: %d, the pets (-want +got):\n%s", target, w.Code, diff)
		}
	}
	w := watch(t, srv, "", nil)
	add("secret d")
	add("e")
	want := eventsOf(t, h, shown)
	if diff := cmp.Diff(want, w.events(t, len(want))); diff != "" {
		t.Errorf("the watch (-want +got):\n%s", diff)
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
	srv := newServer(t, env.h)
	w := watch(t, srv, "?cursor="+string(wire.AppendCursor(nil, int64(len(snapshot(t, env.store))-2))), nil)
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

// countingStore counts the calls of List, and records when each began; the
// pets it returns have names that are copies, as those of a store that
// reads a database do.
type countingStore struct {
	petstore.Store
	lists atomic.Int64
	mu    sync.Mutex
	began []time.Time
}

var _ petstore.Store = (*countingStore)(nil)

func (s *countingStore) List(ctx context.Context, opts petstore.ListOptions) ([]petstore.Pet, error) {
	s.lists.Add(1)
	s.mu.Lock()
	s.began = append(s.began, time.Now())
	s.mu.Unlock()
	pets, err := s.Store.List(ctx, opts)
	for i := range pets {
		pets[i].Name = strings.Clone(pets[i].Name)
	}
	return pets, err
}

// rawWatch opens a watch stream on srv over a raw connection, closed when
// the test ends, with a receive buffer of readBuffer bytes unless it is 0.
func rawWatch(t *testing.T, srv *httptest.Server, readBuffer int) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err == nil && readBuffer > 0 {
		err = c.(*net.TCPConn).SetReadBuffer(readBuffer)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, "GET /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nAccept: text/event-stream\r\n\r\n", testKey)
	return c
}

// openIdle opens n watch streams on srv over raw connections, each read
// up to its first heartbeat and then left idle, and returns them.
func openIdle(t *testing.T, srv *httptest.Server, n int) []net.Conn {
	t.Helper()
	var conns []net.Conn
	buf := make([]byte, 512)
	for range n {
		c := rawWatch(t, srv, 0)
		var got []byte
		if err := c.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
			t.Fatal(err)
		}
		for !strings.Contains(string(got), heartbeat) {
			k, err := c.Read(buf)
			if err != nil {
				t.Fatalf("stream %d: %v after %q", len(conns), err, got)
			}
			got = append(got, buf[:k]...)
		}
		conns = append(conns, c)
	}
	return conns
}

const heartbeat = ": heartbeat\n\n"

// heapAndStacks returns the memory that the heap and the goroutine stacks
// hold, after a garbage collection.
func heapAndStacks() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc + m.StackInuse
}

// TestWatchIdleStreams opens 10, then 1,000, idle streams, and counts the
// store's List calls while they wait: one reader serves them all, so the
// count does not grow with the number of streams. It reports the memory
// that each stream holds and the store calls per second.
func TestWatchIdleStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping a test of 1,000 streams in -short mode")
	}
	const poll, window = 10 * time.Millisecond, 500 * time.Millisecond
	store := &countingStore{Store: memstore.New()}
	srv := newServer(t, newHandler(t, store, petstore.WithWatch(petstore.Watch{Poll: poll, MaxStreamsPerPrincipal: 1000})))
	var counts []int64
	opened := 0
	for _, n := range []int{10, 1000} {
		before := heapAndStacks()
		openIdle(t, srv, n-opened)
		time.Sleep(100 * time.Millisecond) // for the last streams' first List
		if n > 10 {
			t.Logf("memory per idle stream: %.1f KiB (heap and stacks, both ends of the connection)",
				float64(heapAndStacks()-before)/float64(n-opened)/1024)
		}
		opened = n
		start := store.lists.Load()
		time.Sleep(window)
		counts = append(counts, store.lists.Load()-start)
		t.Logf("%d idle streams: %d List calls in %v (%.0f a second; a poll every %v)", n, counts[len(counts)-1], window,
			float64(counts[len(counts)-1])/window.Seconds(), poll)
	}
	if counts[0] == 0 || counts[1] > 2*counts[0]+5 {
		t.Errorf("List calls while idle: %d with 10 streams, %d with 1,000; want them about equal (and not 0)", counts[0], counts[1])
	}
}

// smallBuffers is a listener whose connections have small send buffers, so
// that a client that stops reading fills them soon.
type smallBuffers struct{ net.Listener }

func (l smallBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		err = tc.SetWriteBuffer(8 << 10)
	}
	return c, err
}

// TestWatchStalledReader stops reading a stream while writers create pets
// and another watcher reads them: the stalled stream is disconnected
// within its write timeout once the buffers are full, and the others go
// on. It logs how long the disconnect took and the writers' p99.
func TestWatchStalledReader(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping a test that fills socket buffers in -short mode")
	}
	const writeTimeout = 500 * time.Millisecond
	ended := make(chan time.Time, 2)
	observe := func(_ context.Context, o petstore.WatchObservation) {
		if o.Streams == -1 {
			ended <- time.Now()
		}
	}
	h := newHandler(t, memstore.New(), petstore.WithWatch(petstore.Watch{WriteTimeout: writeTimeout, Observe: observe}))
	srv := httptest.NewUnstartedServer(h)
	srv.Listener = smallBuffers{srv.Listener}
	srv.Start()
	t.Cleanup(srv.Close)

	healthy := watch(t, srv, "", nil)
	rawWatch(t, srv, 4<<10)
	start := time.Now() // it reads nothing from now on

	stop := make(chan struct{})
	var writers sync.WaitGroup
	perWriter := make([][]time.Duration, 4) // each writer's latencies
	lastIDs := make([]int64, len(perWriter))
	for i := range perWriter {
		writers.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				t0 := time.Now()
				p := create(t, h, petstore.NewPet{Name: strings.Repeat("x", 200), CategoryID: 1})
				perWriter[i] = append(perWriter[i], time.Since(t0))
				lastIDs[i] = max(lastIDs[i], p.ID)
			}
		})
	}
	var read, seen atomic.Int64 // events the healthy watcher read, and the last ID
	go func() {
		for {
			e, _, err := healthy.next()
			if err != nil {
				return
			}
			read.Add(1)
			id, _ := strconv.ParseInt(e.ID, 10, 64)
			seen.Store(id)
		}
	}()
	const bound = 20 * time.Second // the write timeout, and the time to fill the buffers, with slack
	select {
	case at := <-ended:
		t.Logf("the stalled stream was disconnected %v after it stopped reading (write timeout %v)", at.Sub(start).Round(time.Millisecond), writeTimeout)
	case <-time.After(bound):
		t.Errorf("the stalled stream was not disconnected within %v", bound)
	}
	time.Sleep(200 * time.Millisecond) // the others go on meanwhile
	close(stop)
	writers.Wait()
	last := slices.Max(lastIDs)
	waitFor(t, "the healthy watcher to read the last pet", func() bool { return seen.Load() == last })
	latencies := slices.Sorted(slices.Values(slices.Concat(perWriter...)))
	n := read.Load()
	t.Logf("%d creates, p99 %v; the healthy watcher read %d events", len(latencies), latencies[len(latencies)*99/100], n)
	if n != last {
		t.Errorf("the healthy watcher read %d events, want %d", n, last)
	}
}

// notifyingStore counts the calls of List of a store that is an
// AddNotifier, and passes its notifications on.
type notifyingStore struct {
	*countingStore
	petstore.AddNotifier
}

var _ petstore.Store = notifyingStore{}

// A store that is an AddNotifier wakes the streams of pets added to it by
// others, without waiting for the poll, and a wake costs one List per view
// however many streams share it.
func TestWatchWokenByStore(t *testing.T) {
	mem := memstore.New()
	store := notifyingStore{&countingStore{Store: mem}, mem}
	h := newHandler(t, store, petstore.WithWatch(petstore.Watch{Poll: time.Hour}))
	srv := newServer(t, h)
	const perView = 10
	var ws []*watcher
	for _, target := range []string{"", "?status=sold"} {
		for range perView {
			ws = append(ws, watch(t, srv, target, nil))
		}
	}
	add := func(name string) event {
		t.Helper()
		p := mustAdd(t, store, petstore.NewPet{Name: name, CategoryID: 1, Status: petstore.StatusSold})
		return eventsOf(t, h, []petstore.Pet{p})[0]
	}
	read := func(want event) {
		t.Helper()
		for i, w := range ws {
			if diff := cmp.Diff([]event{want}, w.events(t, 1)); diff != "" {
				t.Fatalf("stream %d (-want +got):\n%s", i, diff)
			}
		}
	}
	read(add("first"))
	before := store.lists.Load()
	read(add("second"))
	if n := store.lists.Load() - before; n > 4 {
		t.Errorf("%d Lists for one pet added, with 2 views of %d streams each; want at most 2 per view", n, perView)
	}
}

// deafStore is an AddNotifier whose notifications are all lost.
type deafStore struct{ countingStore }

func (*deafStore) NotifyAdds(context.Context, func()) {}

// With an AddNotifier, the poll only covers a lost notification: it runs
// at a tenth of Watch.Poll's rate, and still finds what was added.
func TestWatchNotifiedPoll(t *testing.T) {
	const poll, window = 10 * time.Millisecond, time.Second
	store := &deafStore{countingStore{Store: memstore.New()}}
	h := newHandler(t, store, petstore.WithWatch(petstore.Watch{Poll: poll}))
	srv := newServer(t, h)
	w := watch(t, srv, "", nil)
	p := mustAdd(t, store, petstore.NewPet{Name: "unannounced", CategoryID: 1})
	if diff := cmp.Diff(eventsOf(t, h, []petstore.Pet{p}), w.events(t, 1)); diff != "" {
		t.Fatalf("the pet whose notification was lost (-want +got):\n%s", diff)
	}
	start := store.lists.Load()
	time.Sleep(window)
	if n, most := store.lists.Load()-start, int64(window/(10*poll))+3; n > most {
		t.Errorf("%d Lists in %v with Poll %v and a store that notifies; want at most %d, a poll every %v", n, window, poll, most, 10*poll)
	}
}

// A stream pays for each page it reads from the store for itself from its
// caller's read budget, the first page aside, which its request paid for.
func TestWatchCatchUpSpendsReads(t *testing.T) {
	store := memstore.New()
	const pets = 1000
	for i := range pets {
		mustAdd(t, store, petstore.NewPet{Name: "pet " + strconv.Itoa(i), CategoryID: 1})
	}
	var reads atomic.Int64
	counting := limiterFunc(func(context.Context, string) (time.Duration, error) { reads.Add(1); return 0, nil })
	srv := newServer(t, newHandler(t, store, petstore.WithRateLimit(petstore.RateLimit{Reads: counting})))
	watch(t, srv, "", nil).events(t, pets)
	// The request's read and one for each page after the first: the read
	// of the empty page after the last may come after the last event.
	if got, want := reads.Load(), int64(pets/100); got < want {
		t.Errorf("a stream that read %d pets from the store spent %d reads, want at least %d, one a page", pets, got, want)
	}
}

// A caller's open streams do not count in its in-flight share: they have
// caps of their own. A watch spends a read, and the header of its stream
// says so.
func TestWatchOutOfInFlight(t *testing.T) {
	now := time.Unix(1_800_000_000, 0) // stands still: no request is given back between the watches
	reads := newClockedLimiter(petstore.Rate{PerSecond: 200, Burst: 400}, &now)
	env := newEnv(t, petstore.WithRateLimit(petstore.RateLimit{MaxInFlight: 2, Reads: reads}))
	srv := newServer(t, env.h)
	for i := range 3 {
		w := watch(t, srv, "", nil)
		got := []string{w.resp.Header.Get("RateLimit-Policy"), w.resp.Header.Get("RateLimit")}
		if diff := cmp.Diff([]string{`"reads";q=400;w=2`, fmt.Sprintf(`"reads";r=%d;t=1`, 399-i)}, got); diff != "" {
			t.Errorf("watch %d: RateLimit-Policy and RateLimit (-want +got):\n%s", i, diff)
		}
	}
	if w := serve(env.h, newRequest(t, http.MethodGet, "/v1/pets/1", "", nil)); w.Code != http.StatusOK {
		t.Errorf("a read of a caller with 3 streams open: status %d, want 200", w.Code)
	}
	create(t, env.h, petstore.NewPet{Name: "Rex", CategoryID: 1})
}

// principals returns an Authenticator that accepts any token, as the
// principal of the same name.
func principals() petstore.Authenticator {
	return petstore.AuthenticatorFunc(func(ctx context.Context, _ petstore.Operation, token string) (context.Context, error) {
		return petstore.WithPrincipal(ctx, token), nil
	})
}

// watchAs opens a watch for each of n principals of principals(), p0 to
// p(n-1).
func watchAs(t *testing.T, srv *httptest.Server, n int) []*watcher {
	t.Helper()
	var ws []*watcher
	for i := range n {
		ws = append(ws, watch(t, srv, "", http.Header{"Authorization": {"Bearer p" + strconv.Itoa(i)}}))
	}
	return ws
}

// The views of many principals hold their recent pets within one bound
// of memory over the handler, however long the pets' names.
func TestWatchViewsMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping a test of 40 MB of events in -short mode")
	}
	const views, pets = 40, 1024
	h := newHandler(t, &countingStore{Store: memstore.New()}, petstore.WithAuthenticator(principals()))
	srv := newServer(t, h)
	ws := watchAs(t, srv, views)
	before := heapAndStacks()
	name := strings.Repeat("\U0001F415", petstore.MaxNameLength) // 1 KiB
	for range pets {
		create(t, h, petstore.NewPet{Name: name, CategoryID: 1})
	}
	var wg sync.WaitGroup
	for _, w := range ws {
		wg.Go(func() {
			for range pets {
				if _, _, err := w.next(); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	const bound = petstore.MaxViewBytes + 8<<20 // the pets in the store, the streams' buffers
	if grown := heapAndStacks() - before; grown > bound {
		t.Errorf("%d views of %d pets of 1 KiB hold %d MiB, over %d MiB", views, pets, grown>>20, bound>>20)
	}
}

// Wakes coalesce: a burst of creates costs a round of Lists of every view
// at most once per watchMinGap, not one round per create.
func TestWatchCoalescesWakes(t *testing.T) {
	const views, creates = 4, 200
	store := &countingStore{Store: memstore.New()}
	h := newHandler(t, store, petstore.WithWatch(petstore.Watch{Poll: time.Hour}))
	srv := newServer(t, h)
	var ws []*watcher
	for _, target := range []string{"", "?status=available", "?status=pending", "?status=sold"} {
		ws = append(ws, watch(t, srv, target, nil))
	}
	p := create(t, h, petstore.NewPet{Name: "first", CategoryID: 1, Status: petstore.StatusSold})
	for _, i := range []int{0, 3} {
		if e := ws[i].events(t, 1); e[0].ID != strconv.FormatInt(p.ID, 10) {
			t.Fatalf("stream %d: %v", i, e)
		}
	}
	before, start := store.lists.Load(), time.Now()
	for i := range creates {
		p = create(t, h, petstore.NewPet{Name: "pet " + strconv.Itoa(i), CategoryID: 1, Status: petstore.StatusSold})
	}
	elapsed := time.Since(start)
	ws[0].events(t, creates)
	elapsed += 2 * petstore.WatchMinGap // the rounds that end the burst
	if rounds, most := (store.lists.Load()-before)/views, int64(elapsed/petstore.WatchMinGap)+2; rounds > most {
		t.Errorf("%d creates in %v cost %d rounds of Lists of %d views; want at most %d, one per %v", creates, elapsed, rounds, views, most, petstore.WatchMinGap)
	}
}

// A round that wakes many views pauses after each WatchWave of them, so
// that the streams it woke have written before it wakes more, and requests
// of other callers are read in between.
func TestWatchPausesBetweenWaves(t *testing.T) {
	const views = 2*petstore.WatchWave + 1
	store := &countingStore{Store: memstore.New()}
	h := newHandler(t, store, petstore.WithAuthenticator(principals()), petstore.WithWatch(petstore.Watch{Poll: time.Hour}))
	srv := newServer(t, h)
	ws := watchAs(t, srv, views)
	for i := range 2 { // the first pet primes every view; the second is read by one round
		create(t, h, petstore.NewPet{Name: "pet " + strconv.Itoa(i), CategoryID: 1})
		for _, w := range ws {
			w.events(t, 1)
		}
		if i == 0 {
			time.Sleep(3 * petstore.WatchMinGap) // past the round the first pet's wake began
			store.mu.Lock()
			store.began = nil
			store.mu.Unlock()
		}
	}
	store.mu.Lock()
	defer store.mu.Unlock()
	if len(store.began) != views {
		t.Fatalf("the second pet cost %d Lists; want one for each of %d views", len(store.began), views)
	}
	for _, i := range []int{petstore.WatchWave, 2 * petstore.WatchWave} {
		if gap := store.began[i].Sub(store.began[i-1]); gap < petstore.WatchWavePause {
			t.Errorf("List %d of the round began %v after List %d; want a pause of %v after each %d views", i+1, gap, i, petstore.WatchWavePause, petstore.WatchWave)
		}
	}
}

// BenchmarkWatchViews reports, for 1, 100 and 1,000 views (principals), the
// calls of List per pet created at 20 a second, and the CPU of the process
// (a share of one core) and the calls of List a second while the streams
// idle for 10 seconds: 1,000 streams, or 100 of the one view. Run it with
// -benchtime 1x.
func BenchmarkWatchViews(b *testing.B) {
	for _, views := range []int{1, 100, 1000} {
		b.Run(fmt.Sprintf("views=%d", views), func(b *testing.B) {
			for b.Loop() {
				st, err := watchbench.Open(b.Context(), memstore.New(), min(1000, 100*views), views)
				if err != nil {
					b.Fatal(err)
				}
				perPet, err := st.Create(40, 20)
				if err != nil {
					b.Fatal(err)
				}
				cpu, lists, err := st.Idle(10 * time.Second)
				if err != nil {
					b.Fatal(err)
				}
				st.Close()
				b.ReportMetric(perPet, "lists/pet")
				b.ReportMetric(100*cpu, "%cpu-idle")
				b.ReportMetric(lists, "lists/s-idle")
			}
		})
	}
}
