package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/memstore"
)

// TestBodyGateCallerFirst: a place given back goes to a waiting request of
// a caller that holds none, before the waiting requests of a caller that
// holds many, whichever connections they come on.
func TestBodyGateCallerFirst(t *testing.T) {
	g := newBodyGate(2, 16)
	ctx := context.Background()
	a1, a2, a3, b := &connBodies{}, &connBodies{}, &connBodies{}, &connBodies{}
	alice, bob := &caller{}, &caller{}
	if !g.acquire(ctx, a1, alice, time.Second) || !g.acquire(ctx, a2, alice, time.Second) {
		t.Fatal("the places were not given at once")
	}
	got := make(chan string, 2)
	go func() {
		if g.acquire(ctx, a3, alice, 5*time.Second) { // a connection that holds none, of a caller that holds two
			got <- "alice"
		}
	}()
	time.Sleep(50 * time.Millisecond) // alice waits first
	go func() {
		if g.acquire(ctx, b, bob, 5*time.Second) {
			got <- "bob"
		}
	}()
	time.Sleep(50 * time.Millisecond)
	g.release(a1, alice)
	if first := <-got; first != "bob" {
		t.Errorf("the place went to %s; want bob, who held none", first)
	}
	g.release(a2, alice)
	if second := <-got; second != "alice" {
		t.Errorf("the next place went to %s; want alice", second)
	}
}

// TestFrontClosesOn429: behind front, a caller with its share of requests
// in flight (the API handler's MaxInFlight) is answered 429 with
// Retry-After and Connection: close, whatever connection it comes on,
// while another caller is served; a request without a valid key is
// answered 401 with Connection: close.
func TestFrontClosesOn429(t *testing.T) {
	const alice, bob = "alice-key-0123456789", "bob-key-0123456789"
	entries := []string{"alice:" + alice, bob}
	release := make(chan struct{})
	var holding sync.WaitGroup
	api, err := petstore.New(petstore.WithStore(holdingStore{memstore.New(), &holding, release}),
		petstore.WithAuthenticator(apiKeysAuthenticator(entries)),
		petstore.WithRateLimit(petstore.RateLimit{MaxInFlight: 2}))
	if err != nil {
		t.Fatal(err)
	}
	h := &front{api: api, base: "/v1", who: newCallers(entries), bodies: newBodyGate(4, 4), bodyWait: time.Second}
	get := func(key, query string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodGet, "/v1/pets"+query, nil)
		if key != "" {
			r.Header.Set("Authorization", "Bearer "+key)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	holding.Add(2)
	var done sync.WaitGroup
	for range 2 {
		done.Go(func() { get(alice, "?limit=7") })
	}
	holding.Wait()
	w := get(alice, "")
	if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") == "" || w.Header().Get("Connection") != "close" ||
		!strings.Contains(w.Body.String(), `"code":"rate_limited"`) {
		t.Errorf("alice's third request: %d %v %s; want 429 rate_limited with Retry-After and Connection: close", w.Code, w.Header(), w.Body)
	}
	if w := get(bob, ""); w.Code != http.StatusOK || w.Header().Get("Connection") != "" {
		t.Errorf("bob's request while alice holds her share: %d, Connection %q; want 200, none", w.Code, w.Header().Get("Connection"))
	}
	if w := get("not-a-key", ""); w.Code != http.StatusUnauthorized || w.Header().Get("Connection") != "close" {
		t.Errorf("a request with an unknown key: %d, Connection %q; want 401, close", w.Code, w.Header().Get("Connection"))
	}
	close(release)
	done.Wait()
	if w := get(alice, ""); w.Code != http.StatusOK {
		t.Errorf("alice's request once hers ended: %d; want 200", w.Code)
	}
}

// holdingStore is a Store whose List of a page of 7 says so on holding and
// waits for release.
type holdingStore struct {
	*memstore.Store
	holding *sync.WaitGroup
	release chan struct{}
}

func (s holdingStore) List(ctx context.Context, o petstore.ListOptions) ([]petstore.Pet, error) {
	if o.Limit == 8 { // a page of 7, and one more to know whether another follows
		s.holding.Done()
		<-s.release
	}
	return s.Store.List(ctx, o)
}

// TestSlowBody400: a body that drips a byte every 200 ms, after a head
// with a valid key, is cut off within a few seconds and answered 400
// invalid_body on the wire, never 499, and its connection closed; the pet
// is not stored.
func TestSlowBody400(t *testing.T) {
	const key = "drip-key-0123456789"
	store := memstore.New()
	api, err := petstore.New(petstore.WithStore(store), petstore.WithAuthenticator(petstore.APIKeys(key)))
	if err != nil {
		t.Fatal(err)
	}
	conn := dialFront(t, api, key, 15*time.Second)
	body := `{"name":"Drip","categoryId":1}`
	fmt.Fprintf(conn, "POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", key, len(body))
	go func() {
		for i := range len(body) {
			if _, err := conn.Write([]byte{body[i]}); err != nil {
				return
			}
			time.Sleep(200 * time.Millisecond)
		}
	}()
	start := time.Now()
	answer, err := io.ReadAll(conn)
	elapsed := time.Since(start)
	t.Logf("after %v: %q (%v)", elapsed.Round(time.Millisecond), answer, err)
	if !strings.HasPrefix(string(answer), "HTTP/1.1 400 ") || !strings.Contains(string(answer), "Connection: close") ||
		!strings.Contains(string(answer), `"code":"invalid_body"`) {
		t.Errorf("the answer to a dripping body is %q; want 400 invalid_body with Connection: close", answer)
	}
	if elapsed > 5*time.Second {
		t.Errorf("the dripping body held its place for %v; want it cut off within a few seconds", elapsed)
	}
	if store.Len() != 0 {
		t.Errorf("%d pets stored; want none", store.Len())
	}
}

// TestUnreadBodyCloses: a create over its budget, whose body never comes,
// is answered 429 within unreadGrace with Connection: close, and its
// connection closed, rather than held while net/http waits for the rest of
// the body; a create whose body was read, and one over its budget whose
// body came with its head, keep their connection.
func TestUnreadBodyCloses(t *testing.T) {
	const key = "budget-key-0123456789"
	api, err := petstore.New(petstore.WithStore(memstore.New()), petstore.WithAuthenticator(petstore.APIKeys(key)),
		petstore.WithRateLimit(petstore.RateLimit{Creates: petstore.NewLimiter(petstore.Rate{PerSecond: 0.01, Burst: 1}, 0)}))
	if err != nil {
		t.Fatal(err)
	}
	conn := dialFront(t, api, key, 20*time.Second)
	body := `{"name":"Rex","categoryId":1}`
	head := fmt.Sprintf("POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", key, len(body))
	io.WriteString(conn, head+body) // within the budget: read, answered, and the connection kept
	r := bufio.NewReader(conn)
	resp, err := http.ReadResponse(r, nil)
	if err != nil || resp.StatusCode != http.StatusCreated || resp.Close {
		t.Fatalf("the first create: %v, %v; want 201 on a connection kept open", resp, err)
	}
	io.Copy(io.Discard, resp.Body)

	io.WriteString(conn, head+body) // over the budget, its body sent at once: the connection is kept
	resp, err = http.ReadResponse(r, nil)
	if err != nil || resp.StatusCode != http.StatusTooManyRequests || resp.Close {
		t.Fatalf("a create over its budget with its body: %v, %v; want 429 on a connection kept open", resp, err)
	}
	io.Copy(io.Discard, resp.Body)

	io.WriteString(conn, head) // over the budget, and its body never comes
	start := time.Now()
	resp, err = http.ReadResponse(r, nil)
	if err != nil || resp.StatusCode != http.StatusTooManyRequests || !resp.Close {
		t.Fatalf("the create over its budget: %v, %v; want 429 with Connection: close", resp, err)
	}
	io.Copy(io.Discard, resp.Body)
	if _, err := r.ReadByte(); err != io.EOF {
		t.Errorf("after the 429 the connection gave %v; want it closed", err)
	}
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Errorf("the answer and the close took %v; want them at once, not after the read timeout", elapsed)
	}
}

// dialFront serves api behind front, accepting key, with the read timeout
// of cmd/petstore's server, and returns a connection to it whose deadline
// is d from now. Both close when the test ends.
func dialFront(t *testing.T, api http.Handler, key string, d time.Duration) net.Conn {
	t.Helper()
	srv := httptest.NewUnstartedServer(&front{api: api, base: "/v1", who: newCallers([]string{key}), bodies: newBodyGate(4, 4), bodyWait: 10 * time.Second})
	srv.Config.ConnContext = withConnBodies
	srv.Config.ReadTimeout = 30 * time.Second
	srv.Start()
	t.Cleanup(srv.Close)
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	conn.SetDeadline(time.Now().Add(d))
	return conn
}

// TestCallersOf: the keys of one name are one caller, a key without a name
// is a caller of its own, and a request without a valid key is nobody's.
func TestCallersOf(t *testing.T) {
	c := newCallers([]string{"alice:alice-key-1", "alice:alice-key-2", "plain-key", ":other-plain-key"})
	of := func(header string) *caller {
		r := httptest.NewRequest("POST", "/v1/pets", nil)
		if header != "" {
			r.Header.Set("Authorization", header)
		}
		return c.of(r)
	}
	alice := of("Bearer alice-key-1")
	if alice == c.nobody {
		t.Error("the first key of alice: nobody; want alice")
	}
	if got := of("Bearer alice-key-2"); got != alice {
		t.Error("the second key of alice: another caller; want alice")
	}
	plain, other := of("Bearer plain-key"), of("Bearer other-plain-key")
	if plain == c.nobody || plain == alice || other == c.nobody || other == alice || other == plain {
		t.Error("keys without a name: not each a caller of its own")
	}
	for _, h := range []string{"", "Bearer alice-key-3", "Bearer alice", "Basic alice-key-1", "Bearer :other-plain-key"} {
		if got := of(h); got != c.nobody {
			t.Errorf("Authorization %q: a caller; want nobody", h)
		}
	}
}
