package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestLimitsSlowHeaders holds a connection to the server process open,
// sending the request headers one byte every 200ms without ever finishing
// them: the server closes it once its header timeout (1s here) has passed.
func TestLimitsSlowHeaders(t *testing.T) {
	const key = "limits-key"
	p := startServer(t, buildServer(t), key, nil, "-read-header-timeout", "1s")

	conn, err := net.DialTimeout("tcp", p.addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	const bound = 10 * time.Second
	if err := conn.SetDeadline(time.Now().Add(bound)); err != nil {
		t.Fatal(err)
	}

	// The request line comes at once; then the headers, one byte at a
	// time, never ending: after the credential comes a header whose value
	// grows forever.
	if _, err := fmt.Fprintf(conn, "GET %s HTTP/1.1\r\n", p.path); err != nil {
		t.Fatal(err)
	}
	head := fmt.Sprintf("Host: %s\r\nAuthorization: Bearer %s\r\nX-Slow: ", p.addr, key)
	sent := make(chan int, 1)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		n := 0
		for i := 0; ; i++ {
			b := byte('a')
			if i < len(head) {
				b = head[i]
			}
			if _, err := conn.Write([]byte{b}); err != nil {
				break // the server closed the connection
			}
			n++
			select {
			case <-stop:
				return
			case <-time.After(200 * time.Millisecond):
			}
		}
		sent <- n
	}()

	start := time.Now()
	got, err := io.ReadAll(conn)
	elapsed := time.Since(start)
	var netErr net.Error
	if errors.As(err, &netErr) && netErr.Timeout() {
		t.Fatalf("the server kept a connection sending headers slowly open for %v; it must close it after its header timeout", bound)
	}
	// net/http closes the connection, with or without an error answer
	// (400, or 408 where it says why).
	if len(got) > 0 && !strings.HasPrefix(string(got), "HTTP/1.1 4") {
		t.Errorf("the server answered %q to headers that never ended; want the connection closed, perhaps after an error", got)
	}
	select {
	case n := <-sent:
		t.Logf("the server closed the connection after %v and %d bytes of headers; it answered %q (%v)", elapsed.Round(time.Millisecond), n, got, err)
	case <-time.After(5 * time.Second):
		t.Errorf("the connection was closed for reading after %v, but writing to it still succeeds", elapsed.Round(time.Millisecond))
	}
}

// TestLimitsHeaderSize sends requests with headers of several sizes to the
// server process: headers under its limit are served, and headers well over
// it (64 KiB, against the 16 KiB limit and the slack that net/http adds)
// are answered 431, or the connection is closed, without reaching the
// handler.
func TestLimitsHeaderSize(t *testing.T) {
	const key = "limits-key"
	p := startServer(t, buildServer(t), key, nil, "-read-header-timeout", "1s")

	tests := []struct {
		name   string
		size   int // of the value of the header X-Big
		status int // 0: the connection may also be closed without an answer
	}{
		{"8 KiB is served", 8 << 10, http.StatusOK},
		{"64 KiB is refused", 64 << 10, http.StatusRequestHeaderFieldsTooLarge},
		{"1 MiB is refused", 1 << 20, http.StatusRequestHeaderFieldsTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conn, err := net.DialTimeout("tcp", p.addr, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if err := conn.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
				t.Fatal(err)
			}
			req := fmt.Sprintf("GET %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nX-Big: %s\r\nConnection: close\r\n\r\n",
				p.path, p.addr, key, strings.Repeat("b", tt.size))
			// Write while reading: the server may answer, and stop reading,
			// before the request has been sent.
			written := make(chan error, 1)
			go func() {
				_, err := io.WriteString(conn, req)
				written <- err
			}()
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				if tt.status == http.StatusOK {
					t.Fatalf("a request with %d bytes of headers got no answer: %v", tt.size, err)
				}
				t.Logf("the server closed the connection without an answer: %v", err)
				return
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.status {
				t.Errorf("a request with %d bytes of headers answered %s: %q; want %d", tt.size, resp.Status, body, tt.status)
			}
			if tt.status == http.StatusOK {
				if err := <-written; err != nil {
					t.Errorf("sending the request: %v", err)
				}
			}
		})
	}
}
