// Package watchbench measures how soon a pet created through one instance
// reaches a watch stream of another: two handlers, each on a Store value of
// its own over the same data, served on loopback.
package watchbench

import (
	"context"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/client"
)

// A Result is what Across measured: the delivery latencies, from the answer
// to a create on A to the event's arrival on B's stream.
type Result struct {
	Pets          int
	P50, P99, Max time.Duration
}

// String formats r as one line.
func (r Result) String() string {
	return fmt.Sprintf("%d pets: delivery p50 %v, p99 %v, max %v", r.Pets, r.P50.Round(10*time.Microsecond),
		r.P99.Round(10*time.Microsecond), r.Max.Round(10*time.Microsecond))
}

const key = "watchbench-key-0123456789"

// serve serves a handler on s with opts on loopback until ctx ends, and
// returns a client of it.
func serve(ctx context.Context, s petstore.Store, opts []petstore.Option) (*client.Client, error) {
	h, err := petstore.New(append([]petstore.Option{petstore.WithStore(s), petstore.WithAuthenticator(petstore.APIKeys(key))}, opts...)...)
	if err != nil {
		return nil, err
	}
	srv := httptest.NewServer(h)
	context.AfterFunc(ctx, srv.Close)
	return client.New(srv.URL+petstore.DefaultBasePath, client.WithAPIKey(key))
}

// Across creates n pets at perSecond through a handler on a while a stream
// of a handler on b watches, each handler with opts, and returns the
// delivery latencies. It fails when the stream misses a pet, repeats one,
// or sends them out of order, or when a pet has not arrived 10 seconds
// after the last create.
func Across(ctx context.Context, a, b petstore.Store, n int, perSecond float64, opts ...petstore.Option) (Result, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ca, err := serve(ctx, a, opts)
	if err != nil {
		return Result{}, err
	}
	cb, err := serve(ctx, b, opts)
	if err != nil {
		return Result{}, err
	}
	start, err := b.List(ctx, petstore.ListOptions{})
	if err != nil {
		return Result{}, err
	}
	var after int64
	if len(start) > 0 {
		after = start[len(start)-1].ID
	}

	var mu sync.Mutex
	created := map[int64]time.Time{}
	var seen []int64
	arrived := map[int64]time.Time{}
	all := make(chan struct{})
	watching := make(chan error, 1)
	go func() {
		for pet, err := range cb.Watch(ctx, petstore.ListOptions{After: after}) {
			if err != nil {
				watching <- err
				return
			}
			mu.Lock()
			seen = append(seen, pet.ID)
			arrived[pet.ID] = time.Now()
			if len(seen) == n {
				close(all)
			}
			mu.Unlock()
		}
	}()
	time.Sleep(100 * time.Millisecond) // the stream opens

	tick := time.NewTicker(time.Duration(float64(time.Second) / perSecond))
	defer tick.Stop()
	for i := range n {
		<-tick.C
		p, _, err := ca.Add(ctx, petstore.NewPet{Name: fmt.Sprintf("pet %d", i), CategoryID: 1}, petstore.AddOptions{})
		if err != nil {
			return Result{}, err
		}
		mu.Lock()
		created[p.ID] = time.Now()
		mu.Unlock()
	}
	select {
	case <-all:
	case err := <-watching:
		return Result{}, err
	case <-time.After(10 * time.Second):
	}
	mu.Lock()
	defer mu.Unlock()
	want := slices.Sorted(maps.Keys(created))
	if !slices.Equal(want, seen) {
		return Result{}, fmt.Errorf("created %d pets %v, the stream sent %d: %v", len(want), want, len(seen), seen)
	}
	lat := make([]time.Duration, 0, n)
	for _, id := range want {
		lat = append(lat, max(arrived[id].Sub(created[id]), 0))
	}
	slices.Sort(lat)
	return Result{Pets: n, P50: lat[len(lat)/2], P99: lat[(len(lat)*99+99)/100-1], Max: lat[len(lat)-1]}, nil
}

// counting counts the calls of List of a Store.
type counting struct {
	petstore.Store
	lists atomic.Int64
}

func (s *counting) List(ctx context.Context, opts petstore.ListOptions) ([]petstore.Pet, error) {
	s.lists.Add(1)
	return s.Store.List(ctx, opts)
}

// countingNotifier is a counting store that passes on the notifications
// of an AddNotifier.
type countingNotifier struct {
	*counting
	petstore.AddNotifier
}

// A Streams is a handler on a Store with open watch streams that read
// nothing after their first heartbeat: n of them, of views principals.
type Streams struct {
	store *counting
	h     http.Handler
	conns []net.Conn
}

// Open serves a handler on s, with its defaults, and opens n idle streams
// of views principals. Close ends them.
func Open(ctx context.Context, s petstore.Store, n, views int) (*Streams, error) {
	c := &counting{Store: s}
	var store petstore.Store = c
	if an, ok := s.(petstore.AddNotifier); ok {
		store = countingNotifier{c, an}
	}
	// Any token is accepted as the principal of its name.
	anyPrincipal := petstore.AuthenticatorFunc(func(ctx context.Context, _ petstore.Operation, token string) (context.Context, error) {
		return petstore.WithPrincipal(ctx, token), nil
	})
	h, err := petstore.New(petstore.WithStore(store), petstore.WithAuthenticator(anyPrincipal))
	if err != nil {
		return nil, err
	}
	srv := httptest.NewServer(h)
	context.AfterFunc(ctx, srv.Close)
	st := &Streams{store: c, h: h}
	buf := make([]byte, 512)
	for i := range n {
		conn, err := net.Dial("tcp", srv.Listener.Addr().String())
		if err != nil {
			st.Close()
			return nil, err
		}
		st.conns = append(st.conns, conn)
		fmt.Fprintf(conn, "GET /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer p%d\r\nAccept: text/event-stream\r\n\r\n", i%views)
		var got []byte
		for !strings.Contains(string(got), ": heartbeat\n\n") {
			k, err := conn.Read(buf)
			if err != nil {
				st.Close()
				return nil, fmt.Errorf("stream %d: %w", i, err)
			}
			got = append(got, buf[:k]...)
		}
	}
	return st, nil
}

// Close ends the streams.
func (st *Streams) Close() {
	for _, c := range st.conns {
		c.Close()
	}
}

// Create creates n pets through the handler at perSecond, and returns the
// calls of List per pet that they cost, counted until 100 ms after the
// last.
func (st *Streams) Create(n int, perSecond float64) (float64, error) {
	before := st.store.lists.Load()
	tick := time.NewTicker(time.Duration(float64(time.Second) / perSecond))
	defer tick.Stop()
	for i := range n {
		<-tick.C
		r := httptest.NewRequest(http.MethodPost, "/v1/pets", strings.NewReader(fmt.Sprintf(`{"name":"pet %d","categoryId":1}`, i)))
		r.Header.Set("Authorization", "Bearer creator")
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		st.h.ServeHTTP(w, r)
		if w.Code != http.StatusCreated {
			return 0, fmt.Errorf("create: %d %s", w.Code, w.Body)
		}
	}
	time.Sleep(100 * time.Millisecond)
	return float64(st.store.lists.Load()-before) / float64(n), nil
}

// Idle returns the CPU that the process spent over d, as a share of one
// core, and the calls of List a second meanwhile.
func (st *Streams) Idle(d time.Duration) (cpu, listsPerSecond float64, err error) {
	before, err := cpuTime()
	if err != nil {
		return 0, 0, err
	}
	lists := st.store.lists.Load()
	time.Sleep(d)
	after, err := cpuTime()
	if err != nil {
		return 0, 0, err
	}
	return float64(after-before) / float64(d), float64(st.store.lists.Load()-lists) / d.Seconds(), nil
}

// cpuTime returns the user and system CPU time of the process so far.
func cpuTime() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, err
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}

// BenchmarkAcross runs Across with 200 pets at 20 a second from a to c at
// each iteration of b, and reports the delivery's p50 and p99.
func BenchmarkAcross(b *testing.B, a, c petstore.Store) {
	for b.Loop() {
		r, err := Across(b.Context(), a, c, 200, 20)
		if err != nil {
			b.Fatal(err)
		}
		b.Log(r)
		b.ReportMetric(float64(r.P50)/1e6, "p50-ms")
		b.ReportMetric(float64(r.P99)/1e6, "p99-ms")
	}
}

// BenchmarkIdle reports, at each iteration of a sub-benchmark for 10 and
// for 1,000 views (principals), the CPU of the process (a share of one
// core) and the calls of List a second while 1,000 watch streams of a
// handler on the Store that open makes idle for 10 seconds.
func BenchmarkIdle(b *testing.B, open func(b *testing.B) petstore.Store) {
	for _, views := range []int{10, 1000} {
		b.Run(fmt.Sprintf("views=%d", views), func(b *testing.B) {
			s := open(b)
			for b.Loop() {
				st, err := Open(b.Context(), s, 1000, views)
				if err != nil {
					b.Fatal(err)
				}
				cpu, lists, err := st.Idle(10 * time.Second)
				if err != nil {
					b.Fatal(err)
				}
				st.Close()
				b.ReportMetric(100*cpu, "%cpu-idle")
				b.ReportMetric(lists, "lists/s-idle")
			}
		})
	}
}
