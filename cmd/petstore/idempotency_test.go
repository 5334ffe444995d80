package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petstore-go/petstore"
)

// TestPostgresIdempotencyTwoProcesses runs two server processes on one
// table and sends creates with an Idempotency-Key to both: at once (two to
// each), one after the other, and through a proxy that drops the first response to
// each. Every key creates exactly one pet, and every answer after the first
// is that pet replayed (or 409 while the first still runs, then a replay).
func TestPostgresIdempotencyTwoProcesses(t *testing.T) {
	postgresServerURL(t)
	bin := buildServer(t)
	const apiKey = "postgres-idempotency-key"
	schema, serverURL := postgresSchema(t)
	procs := [2]*serverProcess{
		startServer(t, bin, apiKey, nil, "-postgres", serverURL),
		startServer(t, bin, apiKey, nil, "-postgres", serverURL),
	}
	client := &http.Client{
		Timeout:   30 * time.Second,
		Transport: &http.Transport{MaxIdleConnsPerHost: 64},
	}
	t.Cleanup(client.CloseIdleConnections)
	ctx := context.Background()

	t.Run("AtOnce", func(t *testing.T) {
		const keys = 50
		var (
			all201, with409 int
			wg              sync.WaitGroup
		)
		for k := range keys {
			pet := petstore.NewPet{Name: fmt.Sprintf("at-once %d", k), CategoryID: int64(k + 1)}
			idemKey := fmt.Sprintf("at-once-%d", k)
			var (
				answers [4]apiAnswer // from procs[0], procs[1], procs[0], procs[1]
				errs    [4]error
				start   = make(chan struct{})
			)
			for i := range answers {
				req, err := newCreate(ctx, procs[i%2].baseURL, apiKey, idemKey, pet)
				if err != nil {
					t.Fatal(err)
				}
				wg.Go(func() {
					<-start
					answers[i], errs[i] = do(client, req)
				})
			}
			close(start)
			wg.Wait()
			if err := errors.Join(errs[:]...); err != nil {
				t.Fatalf("key %s: %v", idemKey, err)
			}
			if !slices.ContainsFunc(answers[:], func(a apiAnswer) bool { return a.status != http.StatusCreated }) {
				all201++
			}
			// A 409 says the first create still runs: its retry replays.
			for i, a := range answers {
				if a.status != http.StatusConflict {
					continue
				}
				with409++
				if a.code() != "idempotency_key_in_use" || a.header.Get("Retry-After") == "" {
					t.Errorf("key %s, process %d: %v; want 409 idempotency_key_in_use with Retry-After", idemKey, i, a)
				}
				answers[i] = retryCreate(t, client, procs[i%2].baseURL, apiKey, idemKey, pet)
			}
			checkOneCreate(t, idemKey, pet, answers[:])
		}
		t.Logf("%d keys sent twice to each process at once: all four answered 201 for %d keys; %d answers were 409 (then replayed)",
			keys, all201, with409)
		if pets, names := postgresNamed(t, schema, "at-once %"); pets != keys || names != keys {
			t.Errorf("the table holds %d pets with %d names for %d keys; want one pet per key", pets, names, keys)
		}
	})

	t.Run("OneAfterTheOther", func(t *testing.T) {
		const keys = 50
		for k := range keys {
			pet := petstore.NewPet{Name: fmt.Sprintf("in turn %d", k), CategoryID: int64(k + 1), Status: petstore.StatusPending}
			idemKey := fmt.Sprintf("in-turn-%d", k)
			first, second := procs[k%2], procs[1-k%2]
			var answers []apiAnswer
			for _, p := range []*serverProcess{first, second, first} {
				req, err := newCreate(ctx, p.baseURL, apiKey, idemKey, pet)
				if err != nil {
					t.Fatal(err)
				}
				a, err := do(client, req)
				if err != nil {
					t.Fatalf("key %s: %v", idemKey, err)
				}
				answers = append(answers, a)
			}
			if answers[0].replayed() {
				t.Errorf("key %s: the first create is answered as a replay: %v", idemKey, answers[0])
			}
			checkOneCreate(t, idemKey, pet, answers)

			// Another pet with the key, through the process that did not
			// create it.
			other := pet
			other.Name += " again"
			req, err := newCreate(ctx, second.baseURL, apiKey, idemKey, other)
			if err != nil {
				t.Fatal(err)
			}
			if a, err := do(client, req); err != nil || a.status != http.StatusUnprocessableEntity || a.code() != "idempotency_key_reused" {
				t.Errorf("key %s with another pet: %v, %v; want 422 idempotency_key_reused", idemKey, a, err)
			}
		}
		if pets, names := postgresNamed(t, schema, "in turn %"); pets != keys || names != keys {
			t.Errorf("the table holds %d pets with %d names for %d keys; want one pet per key", pets, names, keys)
		}
	})

	t.Run("DroppingProxy", func(t *testing.T) {
		const creates, clients = 1000, 16
		drop := &dropFirstResponse{next: &http.Transport{MaxIdleConnsPerHost: 64}, seen: make(map[string]bool)}
		proxy := httptest.NewServer(alternatingProxy(t, drop, procs[:]))
		defer proxy.Close()
		proxyBase := proxy.URL + procs[0].path[:len(procs[0].path)-len("/pets")]

		var (
			next, attempts, replayed atomic.Int64
			wg                       sync.WaitGroup
		)
		for range clients {
			wg.Go(func() {
				for {
					i := next.Add(1) - 1
					if i >= creates {
						return
					}
					pet := petstore.NewPet{Name: fmt.Sprintf("proxied %d", i), CategoryID: i + 1}
					idemKey := fmt.Sprintf("proxied-%d", i)
					a, n, err := createUntil201(ctx, client, proxyBase, apiKey, idemKey, pet)
					attempts.Add(int64(n))
					if err != nil {
						t.Errorf("key %s: %v", idemKey, err)
						return
					}
					got, err := a.pet()
					if err != nil {
						t.Errorf("key %s: %v", idemKey, err)
						return
					}
					if got.NewPet != pet {
						t.Errorf("key %s: created %+v; want %+v", idemKey, got.NewPet, pet)
					}
					if a.replayed() {
						replayed.Add(1)
					}
				}
			})
		}
		wg.Wait()
		// The client's transport itself sends a request with an
		// Idempotency-Key again when its connection fails before the
		// answer; the proxy counts those too.
		t.Logf("%d creates through the proxy: %d attempts by the clients, %d requests forwarded, %d responses dropped, %d answered 201 with Idempotent-Replayed",
			creates, attempts.Load(), drop.forwarded.Load(), drop.dropped.Load(), replayed.Load())
		// The first answer to every key was dropped, so the 201 that each
		// client got is a replay.
		if replayed.Load() != creates {
			t.Errorf("%d of the %d creates ended in a replay; want all, as the proxy dropped every first answer", replayed.Load(), creates)
		}
		if pets, names := postgresNamed(t, schema, "proxied %"); pets != creates || names != creates {
			t.Errorf("the table holds %d pets with %d names after %d creates; want one pet per create", pets, names, creates)
		}
	})
}

// checkOneCreate checks the final answers to the creates of pet with one
// key: each is 201 with the same pet, and only one of them is not a replay.
func checkOneCreate(t *testing.T, idemKey string, pet petstore.NewPet, answers []apiAnswer) {
	t.Helper()
	var (
		first   petstore.Pet
		created int
	)
	for i, a := range answers {
		if a.status != http.StatusCreated {
			t.Errorf("key %s, answer %d: %v; want 201", idemKey, i, a)
			continue
		}
		got, err := a.pet()
		if err != nil {
			t.Errorf("key %s, answer %d: %v", idemKey, i, err)
			continue
		}
		if got.NewPet != pet {
			t.Errorf("key %s, answer %d: %+v; want %+v", idemKey, i, got.NewPet, pet)
		}
		if first.ID == 0 {
			first = got
		} else if got.ID != first.ID {
			t.Errorf("key %s: answered with pets %d and %d; want one", idemKey, first.ID, got.ID)
		}
		if !a.replayed() {
			created++
		}
	}
	if created != 1 {
		t.Errorf("key %s: %d answers are not replays; want 1: %v", idemKey, created, answers)
	}
}

// retryCreate sends the create of pet with idemKey to the server at baseURL
// until it is answered otherwise than 409, and returns that answer.
func retryCreate(t *testing.T, client *http.Client, baseURL, apiKey, idemKey string, pet petstore.NewPet) apiAnswer {
	t.Helper()
	for range 100 {
		time.Sleep(10 * time.Millisecond)
		req, err := newCreate(context.Background(), baseURL, apiKey, idemKey, pet)
		if err != nil {
			t.Fatal(err)
		}
		a, err := do(client, req)
		if err != nil {
			t.Fatalf("key %s, retry: %v", idemKey, err)
		}
		if a.status != http.StatusConflict {
			return a
		}
	}
	t.Fatalf("key %s: still 409 after 100 retries 10ms apart", idemKey)
	return apiAnswer{}
}

// createUntil201 sends the create of pet with idemKey to baseURL until it is
// answered 201, retrying after an error and after 409 and 503, and returns
// that answer and the number of attempts.
func createUntil201(ctx context.Context, client *http.Client, baseURL, apiKey, idemKey string, pet petstore.NewPet) (apiAnswer, int, error) {
	var last error
	for n := 1; n <= 20; n++ {
		req, err := newCreate(ctx, baseURL, apiKey, idemKey, pet)
		if err != nil {
			return apiAnswer{}, n, err
		}
		a, err := do(client, req)
		switch {
		case err != nil:
			last = err
		case a.status == http.StatusCreated:
			return a, n, nil
		case a.status == http.StatusConflict, a.status == http.StatusServiceUnavailable:
			last = fmt.Errorf("%v", a)
			time.Sleep(10 * time.Millisecond)
		default:
			return a, n, fmt.Errorf("attempt %d: %v; want 201", n, a)
		}
	}
	return apiAnswer{}, 20, fmt.Errorf("no 201 in 20 attempts; the last: %v", last)
}

// alternatingProxy returns a reverse proxy that sends each request to the
// next of procs in turn, through transport. When transport fails, the
// proxy closes the client's connection without an answer, as a network
// that loses the response would.
func alternatingProxy(t *testing.T, transport http.RoundTripper, procs []*serverProcess) *httputil.ReverseProxy {
	targets := make([]*url.URL, len(procs))
	for i, p := range procs {
		u, err := url.Parse("http://" + p.addr)
		if err != nil {
			t.Fatal(err)
		}
		targets[i] = u
	}
	var turn atomic.Uint64
	return &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(targets[(turn.Add(1)-1)%uint64(len(targets))])
		},
		Transport: transport,
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, _ error) {
			conn, _, err := http.NewResponseController(w).Hijack()
			if err != nil {
				w.WriteHeader(http.StatusBadGateway)
				return
			}
			conn.Close()
		},
	}
}

// dropFirstResponse is a transport that forwards every request, and of
// the first response to each Idempotency-Key reads it in full and then
// reports an error instead: the server has done the request, and its client
// never hears of it.
type dropFirstResponse struct {
	next               http.RoundTripper
	forwarded, dropped atomic.Int64

	mu   sync.Mutex
	seen map[string]bool // keys whose first response is gone
}

var errDropped = errors.New("the proxy dropped the response")

func (d *dropFirstResponse) RoundTrip(r *http.Request) (*http.Response, error) {
	d.forwarded.Add(1)
	resp, err := d.next.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	key := r.Header.Get("Idempotency-Key")
	d.mu.Lock()
	first := key != "" && !d.seen[key]
	d.seen[key] = true
	d.mu.Unlock()
	if !first {
		return resp, nil
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	d.dropped.Add(1)
	return nil, errors.Join(errDropped, err)
}
