package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/petstore-go/petstore"
)

// victim sends one list and one create every 50 ms with its own key, as a
// well-behaved client of the server p does, until ctx is done, and returns
// the latencies of its requests and its failures (any answer but 200 and
// 201, or a transport error).
func victim(ctx context.Context, p *serverProcess, key string) (latencies []time.Duration, failures []string) {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}, Timeout: 30 * time.Second}
	defer client.CloseIdleConnections()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return latencies, failures
		case <-tick.C:
		}
		list, _ := newGet(context.Background(), p.baseURL, key, "/pets?limit=20")
		create, _ := newCreate(context.Background(), p.baseURL, key, "", petstore.NewPet{Name: fmt.Sprintf("victim %d", i), CategoryID: 1})
		for _, req := range []*http.Request{list, create} {
			start := time.Now()
			a, err := do(client, req)
			latencies = append(latencies, time.Since(start))
			if err != nil || a.status != http.StatusOK && a.status != http.StatusCreated {
				failures = append(failures, fmt.Sprintf("%s %s: %v %v", req.Method, req.URL.Path, a, err))
			}
		}
	}
}

// p99 returns the 99th percentile of ds.
func p99(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)*99/100]
}

// p99Floor is the least p99 that the victim's p99 under attack is held to
// twice of: on a shared machine of two cores, the quiet p99 of the same
// run varies from 2 to 50 ms from one run to the next, which is scheduler
// noise, not a measure of the server. (Before the limits, the victim's
// p50 under these attacks was 4 to 20 seconds.)
const p99Floor = 50 * time.Millisecond

// rawConn dials the server p and sends head, then body (if any) a byte
// every interval, never reading the answer, until ctx is done. It returns
// the connection.
func rawConn(ctx context.Context, t *testing.T, p *serverProcess, head, body string, interval time.Duration) net.Conn {
	d := net.Dialer{Control: smallReceiveBuffer}
	conn, err := d.DialContext(ctx, "tcp", p.addr)
	if err != nil {
		t.Error(err)
		return nil
	}
	if _, err := io.WriteString(conn, head); err != nil {
		return conn
	}
	go func() {
		for i := range len(body) {
			select {
			case <-ctx.Done():
				return
			case <-time.After(interval):
			}
			if _, err := conn.Write([]byte{body[i]}); err != nil {
				return
			}
		}
	}()
	return conn
}

// closedBy reports whether the server has closed conn: reading what it
// sent ends before deadline.
func closedBy(conn net.Conn, deadline time.Time) bool {
	conn.SetReadDeadline(deadline)
	_, err := io.Copy(io.Discard, conn)
	var ne net.Error
	return !(errors.As(err, &ne) && ne.Timeout())
}

// TestAttacks runs each attack of the hostile clients against the server
// on its defaults, with a victim (a second valid key) sending one list and
// one create every 50 ms: the victim sees no error, and its p99 is at most
// twice what it is with no attack (or p99Floor); connections that hold
// what they should not are closed within a few seconds.
func TestAttacks(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping a test that builds and runs the server as a process in -short mode")
	}
	bin := buildServer(t)
	const attacker, victimKey = "attacker-key-0123456789", "victim-key-0123456789"
	keys := "mallory:" + attacker + ",victor:" + victimKey
	const period = 4 * time.Second
	drip := `{"name":"drip","categoryId":1}`
	cases := []struct {
		name  string
		args  []string
		conns int
		// attack opens one attacking connection, or returns nil.
		attack func(ctx context.Context, t *testing.T, p *serverProcess) net.Conn
		// flood sends requests as fast as it can, or is nil.
		flood func(ctx context.Context, p *serverProcess)
	}{{
		name:  "docs bundle never read, no key",
		conns: 60,
		attack: func(ctx context.Context, t *testing.T, p *serverProcess) net.Conn {
			return rawConn(ctx, t, p, "GET "+strings.TrimSuffix(p.path, "/pets")+"/docs/swagger-ui-bundle.js HTTP/1.1\r\nHost: x\r\nAccept-Encoding: identity\r\n\r\n", "", 0)
		},
	}, {
		name:  "bodies dripping at a byte a second, one key",
		conns: 100,
		attack: func(ctx context.Context, t *testing.T, p *serverProcess) net.Conn {
			head := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", p.path, attacker, len(drip))
			return rawConn(ctx, t, p, head, drip, time.Second)
		},
	}, {
		name:  "one key on most connections, -max-conns 64",
		args:  []string{"-max-conns", "64"},
		conns: 100,
		attack: func(ctx context.Context, t *testing.T, p *serverProcess) net.Conn {
			head := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", p.path, attacker, len(drip))
			return rawConn(ctx, t, p, head, drip, time.Second)
		},
	}, {
		name: "deep pages and unique Idempotency-Keys, one key",
		flood: func(ctx context.Context, p *serverProcess) {
			client := &http.Client{Timeout: 10 * time.Second}
			for i := 0; ctx.Err() == nil; i++ {
				req, _ := newGet(ctx, p.baseURL, attacker, "/pets?limit=100&cursor=zzzz")
				if i%2 == 1 {
					req, _ = newCreate(ctx, p.baseURL, attacker, strings.Repeat("k", 240)+fmt.Sprint(i), petstore.NewPet{Name: "flood", CategoryID: 1})
				}
				do(client, req)
			}
		},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := startServer(t, bin, keys, defaultBudgets, append([]string{"-store", "memory"}, c.args...)...)
			quiet, quietFailures := runFor(period/2, func(ctx context.Context) ([]time.Duration, []string) { return victim(ctx, p, victimKey) })
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			start := time.Now()
			var conns []net.Conn
			for range c.conns {
				if conn := c.attack(ctx, t, p); conn != nil {
					conns = append(conns, conn)
					defer conn.Close()
				}
			}
			var wg sync.WaitGroup
			if c.flood != nil {
				for range 4 {
					wg.Go(func() { c.flood(ctx, p) })
				}
			}
			loud, failures := runFor(period, func(ctx context.Context) ([]time.Duration, []string) { return victim(ctx, p, victimKey) })
			cancel()
			wg.Wait()
			t.Logf("victim p99: %v with no attack (%d requests), %v under attack (%d requests); %d attacking connections",
				p99(quiet), len(quiet), p99(loud), len(loud), len(conns))
			if len(quietFailures) > 0 || len(failures) > 0 {
				t.Errorf("the victim failed %d times with no attack and %d under attack: %q", len(quietFailures), len(failures), append(quietFailures, failures...)[:1])
			}
			if limit := 2 * max(p99(quiet), p99Floor); p99(loud) > limit {
				t.Errorf("the victim's p99 under attack is %v; want at most %v", p99(loud), limit)
			}
			// A connection that is not read from must be closed within
			// one and a half writeGrace of its last write (see pace): read
			// none until then.
			time.Sleep(time.Until(start.Add(writeGrace*3/2 + 2*time.Second)))
			open, deadline := 0, time.Now().Add(2*time.Second)
			for _, conn := range conns {
				if !closedBy(conn, deadline) {
					open++
				}
			}
			t.Logf("%d attacking connections open after %v", open, time.Since(start))
			if open > 0 {
				t.Errorf("%d of %d attacking connections were not closed %v after they began; want each closed within a few seconds", open, len(conns), time.Since(start))
			}
		})
	}
}

// runFor runs f with a context that ends after d.
func runFor(d time.Duration, f func(context.Context) ([]time.Duration, []string)) ([]time.Duration, []string) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return f(ctx)
}
