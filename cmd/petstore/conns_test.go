package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// exchange sends the raw request req on a new connection to addr and reads
// one response, with its body. The connection is returned open, for the
// caller to see what the server does with it next.
func exchange(t *testing.T, addr, req string) (*http.Response, []byte, net.Conn, *bufio.Reader) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if err := conn.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	// Write while reading: the server may answer, and stop reading, before
	// the request has been sent.
	go io.WriteString(conn, req)
	r := bufio.NewReader(conn)
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatalf("sending %.60q...: no answer: %v", req, err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatalf("reading the body of the answer to %.60q...: %v", req, err)
	}
	return resp, body, conn, r
}

// closedByServer reports whether the server closes conn, whose responses r
// reads, within bound, without sending anything more.
func closedByServer(conn net.Conn, r *bufio.Reader, bound time.Duration) error {
	if err := conn.SetReadDeadline(time.Now().Add(bound)); err != nil {
		return err
	}
	b, err := r.ReadByte()
	var netErr net.Error
	switch {
	case err == nil:
		return fmt.Errorf("the server sent %q after the response instead of closing the connection", b)
	case errors.As(err, &netErr) && netErr.Timeout():
		return fmt.Errorf("the server kept the connection open for %v after the response", bound)
	}
	return nil // EOF or reset: closed
}

// waitForLog waits up to bound for the server's log to contain want.
func waitForLog(p *serverProcess, want string, bound time.Duration) error {
	deadline := time.After(bound)
	for !strings.Contains(p.stderr.String(), want) {
		select {
		case <-p.stderr.written():
		case <-deadline:
			return fmt.Errorf("the server's log does not say %s within %v:\n%s", want, bound, p.stderr)
		}
	}
	return nil
}

// unauthorizedBody is the JSON error body of a 401.
type unauthorizedBody struct {
	Code   string `json:"code"`
	Status int    `json:"status"`
}

// TestConnsOptionsStar sends OPTIONS * without a key on a raw connection:
// the handler, not net/http's general OPTIONS handler, answers it, with
// the JSON 401, and closes the connection.
func TestConnsOptionsStar(t *testing.T) {
	p := startServer(t, buildServer(t), "conns-key", nil)
	resp, body, conn, r := exchange(t, p.addr, "OPTIONS * HTTP/1.1\r\nHost: "+p.addr+"\r\n\r\n")
	var got unauthorizedBody
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatalf("OPTIONS * answered %s with %q; want the JSON 401 (%v)", resp.Status, body, err)
	}
	if diff := cmp.Diff(unauthorizedBody{Code: "unauthorized", Status: 401}, got); diff != "" || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("OPTIONS * without a key answered %s (-want +got body):\n%s", resp.Status, diff)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("OPTIONS * answered with Content-Type %q; want application/json", ct)
	}
	if !resp.Close {
		t.Errorf("the 401 to OPTIONS * does not carry Connection: close")
	}
	if err := closedByServer(conn, r, 5*time.Second); err != nil {
		t.Errorf("after the 401 to OPTIONS *: %v", err)
	}
}

// TestConnsUnauthorizedCloses checks that every kind of 401 says
// Connection: close and closes its connection, while a request with the key
// keeps its connection for the next one.
func TestConnsUnauthorizedCloses(t *testing.T) {
	const key = "conns-key"
	p := startServer(t, buildServer(t), key, nil)
	tests := []struct {
		name, auth string
	}{
		{"no key", ""},
		{"wrong key", "Authorization: Bearer not-the-key\r\n"},
		{"malformed token", "Authorization: Bearer a b\r\n"},
		{"another scheme", "Authorization: Basic " + "dTpw" + "\r\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, _, conn, r := exchange(t, p.addr, "GET "+p.path+" HTTP/1.1\r\nHost: "+p.addr+"\r\n"+tt.auth+"\r\n")
			if resp.StatusCode != http.StatusUnauthorized {
				t.Fatalf("answered %s; want 401", resp.Status)
			}
			if !resp.Close {
				t.Errorf("the 401 does not carry Connection: close")
			}
			if err := closedByServer(conn, r, 5*time.Second); err != nil {
				t.Error(err)
			}
		})
	}
	t.Run("the key keeps the connection", func(t *testing.T) {
		req := "GET " + p.path + " HTTP/1.1\r\nHost: " + p.addr + "\r\nAuthorization: Bearer " + key + "\r\n\r\n"
		resp, _, conn, r := exchange(t, p.addr, req)
		if resp.StatusCode != http.StatusOK || resp.Close {
			t.Fatalf("answered %s, closing %v; want 200, kept alive", resp.Status, resp.Close)
		}
		if _, err := io.WriteString(conn, req); err != nil {
			t.Fatal(err)
		}
		if resp, err := http.ReadResponse(r, nil); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("a second request on the connection: %v, %v; want 200", resp, err)
		}
	})
}

// TestFrontWriterController checks that http.ResponseController reaches
// the ResponseWriter under front, and that only a 401 gets Connection:
// close from it.
func TestFrontWriterController(t *testing.T) {
	for _, status := range []int{http.StatusOK, http.StatusUnauthorized, http.StatusForbidden, http.StatusTooManyRequests} {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			var flushErr error
			h := &front{api: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(status)
				io.WriteString(w, "x")
				flushErr = http.NewResponseController(w).Flush()
			}), base: "/v1"}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
			if flushErr != nil || !rec.Flushed {
				t.Errorf("Flush through http.ResponseController: %v, flushed %v; want it to reach the recorder", flushErr, rec.Flushed)
			}
			want := ""
			if status == http.StatusUnauthorized {
				want = "close"
			}
			if got := rec.Header().Get("Connection"); got != want || rec.Code != status {
				t.Errorf("status %d: Connection %q; want %q", rec.Code, got, want)
			}
		})
	}
}

// TestLimitsHeaderBoundary checks that the header limit the README states,
// 16 KiB for the request line and headers together, is the one enforced:
// a head of exactly 16,384 bytes is served and one byte more is answered
// 431, as are heads just past the limit.
func TestLimitsHeaderBoundary(t *testing.T) {
	const key = "limits-key"
	p := startServer(t, buildServer(t), key, nil)
	for _, tt := range []struct {
		size int // of the whole head, up to and including the blank line
		want int
	}{
		{16<<10 - 512, http.StatusOK},
		{16 << 10, http.StatusOK},
		{16<<10 + 1, http.StatusRequestHeaderFieldsTooLarge},
		{16<<10 + 512, http.StatusRequestHeaderFieldsTooLarge},
		{20 << 10, http.StatusRequestHeaderFieldsTooLarge}, // within net/http's slack before the fix
	} {
		t.Run(strconv.Itoa(tt.size), func(t *testing.T) {
			head := "GET " + p.path + " HTTP/1.1\r\nHost: " + p.addr + "\r\nAuthorization: Bearer " + key + "\r\nX-Pad: "
			const end = "\r\nConnection: close\r\n\r\n"
			req := head + strings.Repeat("p", tt.size-len(head)-len(end)) + end
			if len(req) != tt.size {
				t.Fatalf("made a head of %d bytes; want %d", len(req), tt.size)
			}
			resp, body, _, _ := exchange(t, p.addr, req)
			if resp.StatusCode != tt.want {
				t.Errorf("a head of %d bytes answered %s: %q; want %d", tt.size, resp.Status, body, tt.want)
			}
		})
	}
}

// TestConnsFlood runs the server with a limit of 256 open files and floods
// it, from this process, with connections that hold on: idle ones that send
// nothing, more than the server may serve at once, and unauthenticated
// ones that each send a request, read the 401 and then keep the connection
// until the server closes it. Meanwhile a client with the key must be
// served, each request within a deadline, and the server must never run
// out of file descriptors.
func TestConnsFlood(t *testing.T) {
	const (
		key        = "flood-key"
		openFiles  = 256
		idle       = 300              // connections that send nothing
		unauth     = 2000             // connections that send a request without a key
		workers    = 64               // at once
		authReqs   = 10               // by the client with the key, once the flood is under way
		authBound  = 30 * time.Second // the client's timeout
		holdBound  = 10 * time.Second // how long a flood connection waits for the server to close it
		headerWait = 2 * time.Second  // -read-header-timeout
	)
	// The shell sets the limit, soft and hard, and then becomes the server:
	// the Go runtime raises the soft limit to the hard one on start.
	bin := buildServer(t)
	wrapper := filepath.Join(t.TempDir(), "petstore-limited")
	script := fmt.Sprintf("#!/bin/sh\nulimit -n %d || exit 111\nexec %s \"$@\"\n", openFiles, bin)
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	p := startServer(t, wrapper, key, nil, "-read-header-timeout", headerWait.String())
	wantMax := defaultMaxConns(openFiles)
	if err := waitForLog(p, fmt.Sprintf("max_conns=%d open_files=%d", wantMax, openFiles), 5*time.Second); err != nil {
		t.Fatal(err)
	}

	var (
		dialed, dialFailed           atomic.Int64 // of all flood connections
		idleClosed, idleOpen         atomic.Int64
		got401, closeHeader, other   atomic.Int64
		unauthClosed, unauthHeldOpen atomic.Int64
		noAnswer                     atomic.Int64
		held                         sync.WaitGroup // flood connections waiting for the server to close them
	)
	hold := func(conn net.Conn, r *bufio.Reader, closed, open *atomic.Int64) {
		defer held.Done()
		defer conn.Close()
		if closedByServer(conn, r, holdBound) == nil {
			closed.Add(1)
		} else {
			open.Add(1)
		}
	}

	start := time.Now()
	for range idle {
		conn, err := net.DialTimeout("tcp", p.addr, 5*time.Second)
		if err != nil {
			dialFailed.Add(1)
			continue
		}
		dialed.Add(1)
		held.Add(1)
		go hold(conn, bufio.NewReader(conn), &idleClosed, &idleOpen)
	}

	next := make(chan int)
	var floodDone sync.WaitGroup
	for range workers {
		floodDone.Go(func() {
			for range next {
				conn, err := net.DialTimeout("tcp", p.addr, 10*time.Second)
				if err != nil {
					dialFailed.Add(1)
					continue
				}
				dialed.Add(1)
				conn.SetDeadline(time.Now().Add(holdBound))
				r := bufio.NewReader(conn)
				resp, err := func() (*http.Response, error) {
					if _, err := fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", p.path, p.addr); err != nil {
						return nil, err
					}
					resp, err := http.ReadResponse(r, nil)
					if err == nil {
						_, err = io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
					}
					return resp, err
				}()
				switch {
				case err != nil:
					noAnswer.Add(1)
					conn.Close()
					continue
				case resp.StatusCode == http.StatusUnauthorized:
					got401.Add(1)
				default:
					other.Add(1)
				}
				if resp.Close { // Connection: close
					closeHeader.Add(1)
				}
				held.Add(1)
				go hold(conn, r, &unauthClosed, &unauthHeldOpen)
			}
		})
	}

	// The client with the key starts once the flood is under way, on a
	// new connection for each request.
	var latencies []time.Duration
	var authErrs []string
	authDone := make(chan struct{})
	go func() {
		defer close(authDone)
		client := &http.Client{Timeout: authBound, Transport: &http.Transport{DisableKeepAlives: true}}
		for i := range authReqs {
			time.Sleep(200 * time.Millisecond)
			t0 := time.Now()
			if err := getOK(client, p, key); err != nil {
				authErrs = append(authErrs, fmt.Sprintf("request %d: %v", i+1, err))
				continue
			}
			latencies = append(latencies, time.Since(t0))
		}
	}()
	for i := range unauth {
		next <- i
	}
	close(next)
	floodDone.Wait()
	floodTime := time.Since(start)
	<-authDone
	held.Wait()

	slices.Sort(latencies)
	var maxLatency, median time.Duration
	if len(latencies) > 0 {
		maxLatency, median = latencies[len(latencies)-1], latencies[len(latencies)/2]
	}
	t.Logf("open-file limit %d, max_conns %d: opened %d connections (%d idle, %d unauthenticated; %d dials failed) in %v",
		openFiles, wantMax, dialed.Load(), idle, unauth, dialFailed.Load(), floodTime.Round(time.Millisecond))
	t.Logf("idle: %d closed by the server, %d still open after %v", idleClosed.Load(), idleOpen.Load(), holdBound)
	t.Logf("unauthenticated: %d answered 401 (%d with Connection: close), %d other, %d no answer; %d closed by the server, %d held open",
		got401.Load(), closeHeader.Load(), other.Load(), noAnswer.Load(), unauthClosed.Load(), unauthHeldOpen.Load())
	t.Logf("the client with the key: %d of %d served, latency median %v, max %v",
		len(latencies), authReqs, median.Round(time.Millisecond), maxLatency.Round(time.Millisecond))

	for _, e := range authErrs {
		t.Errorf("the client with the key was not served during the flood: %s", e)
	}
	// A client waits at most until the idle connections that fill the
	// server's places reach their header timeout: a few of those, not the
	// idle timeout of connections that a 401 kept open.
	if bound := 3 * headerWait; maxLatency > bound {
		t.Errorf("the client with the key waited up to %v; want at most %v (3 × -read-header-timeout)", maxLatency, bound)
	}
	if n := got401.Load(); n != unauth || closeHeader.Load() != n || unauthClosed.Load() != n {
		t.Errorf("of %d unauthenticated requests, %d got 401, %d said Connection: close and the server closed %d; want all",
			unauth, n, closeHeader.Load(), unauthClosed.Load())
	}
	if n := idleClosed.Load(); n+dialFailed.Load() < idle {
		t.Errorf("the server closed %d of %d idle connections within %v", n, idle, holdBound)
	}
	if m := regexp.MustCompile(`(?m)^.*too many open files.*$`).FindString(p.stderr.String()); m != "" {
		t.Errorf("the server ran out of file descriptors: %s", m)
	}
}
