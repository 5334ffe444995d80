package main

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/client"
)

// A watcher collects what client.Watch yields, on a goroutine of its own.
type watcher struct {
	status petstore.Status
	mu     sync.Mutex
	pets   []petstore.Pet
	err    error
}

// startWatcher starts watching the server at baseURL for pets of status
// ("" for all) until ctx ends.
func startWatcher(ctx context.Context, t *testing.T, baseURL, key string, status petstore.Status) *watcher {
	t.Helper()
	c, err := client.New(baseURL, client.WithAPIKey(key), client.WithBackoff(50*time.Millisecond, time.Second))
	if err != nil {
		t.Fatal(err)
	}
	w := &watcher{status: status}
	go func() {
		for p, err := range c.Watch(ctx, petstore.ListOptions{Status: status}) {
			w.mu.Lock()
			if err != nil {
				w.err = err
			} else {
				w.pets = append(w.pets, p)
			}
			w.mu.Unlock()
		}
	}()
	return w
}

// waitFor waits up to bound until w has seen the pets of want that match
// its status, and fails the test unless it has seen exactly those, in order.
func (w *watcher) waitFor(t *testing.T, want []petstore.Pet, bound time.Duration) {
	t.Helper()
	want = slices.DeleteFunc(slices.Clone(want), func(p petstore.Pet) bool { return w.status != "" && p.Status != w.status })
	deadline := time.Now().Add(bound)
	for {
		w.mu.Lock()
		got, err := slices.Clone(w.pets), w.err
		w.mu.Unlock()
		if len(got) >= len(want) || err != nil || time.Now().After(deadline) {
			if diff := cmp.Diff(want, got); diff != "" || err != nil {
				t.Errorf("the watcher of status %q saw %d pets of %d, then %v (-want +got):\n%s", w.status, len(got), len(want), err, diff)
			}
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// openWatch opens a watch stream of the server at baseURL with hc, closed
// when the test ends.
func openWatch(t *testing.T, hc *http.Client, baseURL, key string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, baseURL+"/pets", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// TestServerWatchRestarts kills and restarts the server twice under 16
// writers and three watchers: each watcher sees every pet stored, of its
// status, exactly once and in ID order.
func TestServerWatchRestarts(t *testing.T) {
	const key = "watch-key"
	bin, dir := buildServer(t), t.TempDir()
	p := startServerIn(t, dir, bin, key, nil)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var watchers []*watcher
	for _, st := range []petstore.Status{"", petstore.StatusSold, ""} {
		watchers = append(watchers, startWatcher(ctx, t, p.baseURL, key, st))
	}
	writers, stop := sync.WaitGroup{}, make(chan struct{})
	for i := range 16 {
		writers.Go(func() {
			c := newClient(t, p, key)
			statuses := append(petstore.Statuses(), "")
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				// An error (the server is down past the retries) leaves
				// the pet stored or not: the list at the end is the truth.
				_, _, _ = c.Add(ctx, petstore.NewPet{Name: fmt.Sprint("w", i, "-", n), CategoryID: 1,
					Status: statuses[(i+n)%len(statuses)]}, petstore.AddOptions{})
			}
		})
	}
	for range 2 {
		time.Sleep(time.Second)
		if err := p.cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		<-p.exited
		p = startServerIn(t, dir, bin, key, nil, "-addr", p.addr) // the same address, which the clients know
	}
	time.Sleep(time.Second)
	close(stop)
	writers.Wait()
	stored := allPets(ctx, t, p, key)
	t.Logf("%d pets stored", len(stored))
	for _, w := range watchers {
		w.waitFor(t, stored, 30*time.Second)
	}
}

// TestServerWatchProtocols watches over HTTP/1.1 and HTTP/2 a server whose
// -write-timeout is 1s: a stream silent for longer still carries the next
// pet, since each write sets its own deadline.
func TestServerWatchProtocols(t *testing.T) {
	const key = "watch-proto-key"
	bin, ca := buildServer(t), newTestCA(t)
	certFile, keyFile := pairFiles(t, ca.valid(t))
	h2 := ca.client()
	h2.Timeout = 0
	tests := []struct {
		name  string
		env   []string
		hc    *http.Client
		proto int
	}{
		{"HTTP/1.1", nil, &http.Client{}, 1},
		{"HTTP/2", []string{tlsCertVar + "=" + certFile, tlsKeyVar + "=" + keyFile}, h2, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := startServer(t, bin, key, tt.env, "-write-timeout", "1s", "-store-timeout", "500ms")
			resp := openWatch(t, tt.hc, p.baseURL, key)
			if resp.ProtoMajor != tt.proto || resp.StatusCode != http.StatusOK {
				t.Fatalf("%s %d, want HTTP/%d 200", resp.Proto, resp.StatusCode, tt.proto)
			}
			time.Sleep(2500 * time.Millisecond) // silent, past the write timeout
			c, err := client.New(p.baseURL, client.WithAPIKey(key), client.WithHTTPClient(tt.hc))
			if err != nil {
				t.Fatal(err)
			}
			pet, _, err := c.Add(t.Context(), petstore.NewPet{Name: "late", CategoryID: 1}, petstore.AddOptions{})
			if err != nil {
				t.Fatal(err)
			}
			lines := bufio.NewScanner(resp.Body)
			want := fmt.Sprint("id: ", pet.ID)
			for lines.Scan() && !strings.HasPrefix(lines.Text(), "id: ") {
			}
			if lines.Text() != want {
				t.Errorf("the stream gave %q (%v), want %q", lines.Text(), lines.Err(), want)
			}
		})
	}
}

// TestServerWatchCaps: with -watch-max-per-caller 1 a caller's second watch
// is answered 429 with Retry-After, another caller's is not, and /metrics
// counts the streams open.
func TestServerWatchCaps(t *testing.T) {
	p := startServer(t, buildServer(t), "alice:watch-key-a,bob:watch-key-b", nil, "-watch-max-per-caller", "1", "-admin-addr", "127.0.0.1:0")
	watch := func(key string) *http.Response { return openWatch(t, http.DefaultClient, p.baseURL, key) }
	if resp := watch("watch-key-a"); resp.StatusCode != http.StatusOK {
		t.Fatalf("alice's first watch: %d, want 200", resp.StatusCode)
	}
	if resp := watch("watch-key-a"); resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
		t.Errorf("alice's second watch: %d, Retry-After %q; want 429 with one", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	if resp := watch("watch-key-b"); resp.StatusCode != http.StatusOK {
		t.Errorf("bob's watch: %d, want 200", resp.StatusCode)
	}
	waitUntil(t, p, "/metrics counts 2 watch streams", func() bool {
		var n float64
		for _, m := range scrape(t, adminURL(t, p)+"/metrics")["petstore_watch_streams"].GetMetric() {
			n += m.GetGauge().GetValue()
		}
		return n == 2
	})
}
