package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/memstore"
	"golang.org/x/net/http2"
)

// TestBodyGateFair checks that a place given back goes to the waiting
// connection that holds the fewest, not to the first waiter, and that a
// connection holds at most its share.
func TestBodyGateFair(t *testing.T) {
	g := newBodyGate(2, 2)
	a, b := &connBodies{}, &connBodies{}
	anyone := &caller{} // one caller, so that only the connections differ
	ctx := context.Background()
	for i := range 2 {
		if !g.acquire(ctx, a, anyone, time.Second) {
			t.Fatalf("place %d was not given at once", i+1)
		}
	}
	got := make(chan string, 2)
	go func() {
		if g.acquire(ctx, a, anyone, 5*time.Second) {
			got <- "a"
		}
	}()
	time.Sleep(50 * time.Millisecond) // a waits first
	go func() {
		if g.acquire(ctx, b, anyone, 5*time.Second) {
			got <- "b"
		}
	}()
	time.Sleep(50 * time.Millisecond)
	g.release(a, anyone)
	if first := <-got; first != "b" {
		t.Errorf("the place went to %s; want b, which held none", first)
	}
	g.release(a, anyone)
	if second := <-got; second != "a" {
		t.Errorf("the next place went to %s; want a", second)
	}

	// The gate is full: a request that cannot wait long is refused, and
	// one whose client goes away stops waiting.
	if g.acquire(ctx, &connBodies{}, anyone, 20*time.Millisecond) {
		t.Error("a full gate gave a place")
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if g.acquire(cctx, &connBodies{}, anyone, time.Minute) {
		t.Error("a full gate gave a place to a cancelled request")
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.waiting) != 0 {
		t.Errorf("%d connections still wait after their requests gave up", len(g.waiting))
	}
}

// TestBodyGatePerConn checks that one connection cannot take more than its
// share while places are free for others.
func TestBodyGatePerConn(t *testing.T) {
	g := newBodyGate(10, 2)
	a := &connBodies{}
	ctx := context.Background()
	for range 2 {
		if !g.acquire(ctx, a, &caller{}, time.Second) {
			t.Fatal("a connection did not get its share")
		}
	}
	if g.acquire(ctx, a, &caller{}, 20*time.Millisecond) {
		t.Error("a connection got more than its share")
	}
	if !g.acquire(ctx, &connBodies{}, &caller{}, 20*time.Millisecond) {
		t.Error("another connection got no place while places were free")
	}
}

// TestLimitBodies checks the gate around the API handler: a request takes
// a place when the handler reads its body, which it does only for a valid
// key; one that finds no place in time is answered 503 with Retry-After and
// stores nothing; one without a valid key is answered 401 and takes none.
func TestLimitBodies(t *testing.T) {
	const key = "unit-key"
	store := memstore.New()
	api, err := petstore.New(petstore.WithStore(store), petstore.WithAuthenticator(petstore.APIKeys(key)))
	if err != nil {
		t.Fatal(err)
	}
	g := newBodyGate(1, 1)
	h := &front{api: api, base: "/v1", who: newCallers([]string{key}), bodies: g, bodyWait: 50 * time.Millisecond}
	post := func(key string, body io.Reader) *http.Request {
		r := httptest.NewRequest("POST", "/v1/pets", body)
		r.ContentLength = -1 // unknown, as a streamed body's
		r.Header.Set("Authorization", "Bearer "+key)
		r.Header.Set("Content-Type", "application/json")
		return r.WithContext(withConnBodies(r.Context(), nil))
	}
	slow, send := io.Pipe()
	held := make(chan int)
	go func() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, post(key, slow)) // takes the place and holds it while its body is sent
		held <- rec.Code
	}()
	for free := 1; free != 0; { // until the slow request holds the place
		time.Sleep(time.Millisecond)
		g.mu.Lock()
		free = g.free
		g.mu.Unlock()
	}

	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, post(key, strings.NewReader(`{"name":"Tom","categoryId":1}`)))
	if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") == "" {
		t.Errorf("with the place held, a create answered %d with Retry-After %q; want 503 with Retry-After", rec.Code, rec.Header().Get("Retry-After"))
	}
	if !strings.Contains(rec.Body.String(), `"code":"unavailable"`) {
		t.Errorf("the 503 body is %q; want the API's error body", rec.Body)
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, post("wrong-key", strings.NewReader(`{"name":"Eve","categoryId":1}`)))
	if rec.Code != http.StatusUnauthorized {
		t.Errorf("with the place held, a create without a valid key answered %d; want 401 at once", rec.Code)
	}

	send.Write([]byte(`{"name":"Rex","categoryId":1}`))
	send.Close()
	if code := <-held; code != http.StatusCreated {
		t.Errorf("the create that held the place answered %d; want 201", code)
	}
	if n := store.Len(); n != 1 {
		t.Errorf("the store holds %d pets; want 1, the create that had a place", n)
	}
	if g.free != 1 {
		t.Errorf("%d places free after every request ended; want 1", g.free)
	}
}

// TestFrameMeter feeds the frame counter a connection's bytes in pieces of
// every size: control frames beyond the burst are a flood, while DATA
// frames, whatever their payload, are not counted.
func TestFrameMeter(t *testing.T) {
	frames := func(settings, data int) []byte {
		var b bytes.Buffer
		b.WriteString(http2.ClientPreface)
		fr := http2.NewFramer(&b, nil)
		for range data {
			// A payload that looks like SETTINGS frame headers.
			fr.WriteData(1, false, bytes.Repeat([]byte{0, 0, 0, 4, 0, 0, 0, 0, 0}, 100))
		}
		for range settings {
			fr.WriteSettings()
		}
		return b.Bytes()
	}
	tests := []struct {
		name           string
		settings, data int
		chunk          int
		flood          bool
	}{
		{"burst, whole", floodBurst, 10, 1 << 20, false},
		{"burst, bytewise", floodBurst, 10, 1, false},
		{"burst, in 7s", floodBurst, 10, 7, false},
		{"one past the burst", floodBurst + 1, 0, 1 << 20, true},
		{"one past, bytewise", floodBurst + 1, 3, 1, true},
		{"data only", 0, 3000, 4096, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			now := time.Now()
			m := &frameMeter{preface: len(http2.ClientPreface), tokens: floodBurst, last: now}
			b := frames(tt.settings, tt.data)
			flood := false
			for len(b) > 0 && !flood {
				k := min(tt.chunk, len(b))
				flood = m.count(b[:k], now)
				b = b[k:]
			}
			if flood != tt.flood || (!flood && m.frames != tt.settings) {
				t.Errorf("counted %d control frames, flood %v; want %d, flood %v", m.frames, flood, tt.settings, tt.flood)
			}
		})
	}
	t.Run("refilled", func(t *testing.T) {
		now := time.Now()
		m := &frameMeter{preface: len(http2.ClientPreface), tokens: floodBurst, last: now}
		b := frames(floodBurst, 0)
		if m.count(b, now) {
			t.Fatal("the burst was a flood")
		}
		var more bytes.Buffer
		fr := http2.NewFramer(&more, nil)
		for range floodRate {
			fr.WriteSettings()
		}
		if m.count(more.Bytes(), now.Add(time.Second)) {
			t.Error("a second's rate after the burst, a second later, was a flood")
		}
	})
}

// TestHeadSize checks that a request's head is counted as HTTP/1.1 sends
// it.
func TestHeadSize(t *testing.T) {
	raw := "GET /v1/pets?limit=2 HTTP/1.1\r\nHost: example.com\r\nAuthorization: Bearer k\r\nX-A: 1\r\nX-A: 22\r\n\r\n"
	r := httptest.NewRequest("GET", "/v1/pets?limit=2", nil)
	r.Host = "example.com"
	r.Header = http.Header{"Authorization": {"Bearer k"}, "X-A": {"1", "22"}}
	if got := headSize(r); got != len(raw) {
		t.Errorf("headSize = %d; want %d", got, len(raw))
	}
}

// TestConnLimiterEvicts checks that a full listener closes the connection
// idle the longest for a new one, and that it waits while its connections
// are new and within their grace.
func TestConnLimiterEvicts(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := limitListener(inner, 2)
	l.idleGrace = 0
	l.grace = time.Hour
	defer l.Close()
	dial := func() net.Conn {
		c, err := net.Dial("tcp", inner.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	accept := func() (net.Conn, error) {
		type result struct {
			c   net.Conn
			err error
		}
		ch := make(chan result, 1)
		go func() { c, err := l.Accept(); ch <- result{c, err} }()
		select {
		case r := <-ch:
			return r.c, r.err
		case <-time.After(500 * time.Millisecond):
			return nil, nil
		}
	}
	client1 := dial()
	s1, _ := accept()
	dial()
	s2, _ := accept()
	if s1 == nil || s2 == nil {
		t.Fatal("the first two connections were not accepted")
	}
	dial()
	if c, _ := accept(); c != nil {
		t.Fatal("a third connection was accepted while the two were new")
	}
	// The first becomes idle: the waiting Accept closes it and returns
	// the third.
	l.track(s1, http.StateIdle)
	client1.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := client1.Read(make([]byte, 1)); err == nil {
		t.Error("the idle connection was not closed")
	}
	if n := l.evicted.Load(); n != 1 {
		t.Errorf("%d connections evicted; want 1", n)
	}
	s2.Close()
	dial()
	if c, _ := accept(); c == nil {
		t.Error("no connection accepted after one closed")
	}
}
