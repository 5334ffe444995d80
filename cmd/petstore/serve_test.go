package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/petstore-go/petstore"
)

// dial connects to addr, for at most bound of reads and writes; the
// connection is closed when the test ends.
func dial(t *testing.T, addr string, bound time.Duration) net.Conn {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if err := conn.SetDeadline(time.Now().Add(bound)); err != nil {
		t.Fatal(err)
	}
	return conn
}

// exchange sends the raw request req on a new connection to addr and reads
// one response, with its body. The connection is returned open, for the
// caller to see what the server does with it next.
func exchange(t *testing.T, addr, req string) (*http.Response, net.Conn, *bufio.Reader) {
	t.Helper()
	conn := dial(t, addr, 10*time.Second)
	// Write while reading: the server may answer, and stop reading, before
	// the request has been sent.
	go io.WriteString(conn, req)
	r := bufio.NewReader(conn)
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatalf("sending %.60q...: no answer: %v", req, err)
	}
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		t.Fatalf("reading the body of the answer to %.60q...: %v", req, err)
	}
	resp.Body.Close()
	return resp, conn, r
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

// TestServerMemoryStore runs a server with -store memory, which writes no
// data file and says that its pets are lost on exit. Every kind of 401,
// OPTIONS * among them, says Connection: close and closes its connection,
// while a request with the key keeps its connection for the next one. The
// header limit, 16 KiB for the request line and headers together, is the one
// enforced: a head of exactly 16,384 bytes is served and one byte more is
// answered 431.
func TestServerMemoryStore(t *testing.T) {
	const key = "conns-key"
	dir := t.TempDir()
	p := startServerIn(t, dir, buildServer(t), key, nil, "-store", "memory")
	if _, _, err := newClient(t, p, key).Add(t.Context(), petstore.NewPet{Name: "Rex", CategoryID: 1}, petstore.AddOptions{}); err != nil {
		t.Fatal(err)
	}
	if log := p.stderr.String(); !strings.Contains(log, "storing pets in memory; they are lost when the process stops") {
		t.Errorf("the log does not say that pets are kept in memory:\n%s", log)
	}
	if entries, err := os.ReadDir(dir); err != nil || len(entries) != 0 {
		t.Errorf("-store memory left files in its working directory: %v %v", entries, err)
	}
	for _, tt := range []struct{ name, line, auth string }{
		{"no key", "GET /v1/pets", ""},
		{"wrong key", "GET /v1/pets", "Authorization: Bearer not-the-key\r\n"},
		{"malformed token", "GET /v1/pets", "Authorization: Bearer a b\r\n"},
		{"another scheme", "GET /v1/pets", "Authorization: Basic dTpw\r\n"},
		{"OPTIONS *", "OPTIONS *", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp, conn, r := exchange(t, p.addr, tt.line+" HTTP/1.1\r\nHost: "+p.addr+"\r\n"+tt.auth+"\r\n")
			if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("Content-Type") != "application/json" {
				t.Fatalf("answered %s with Content-Type %q; want 401, application/json", resp.Status, resp.Header.Get("Content-Type"))
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
		req := "GET /v1/pets HTTP/1.1\r\nHost: " + p.addr + "\r\nAuthorization: Bearer " + key + "\r\n\r\n"
		resp, conn, r := exchange(t, p.addr, req)
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
	for _, tt := range []struct {
		size int // of the whole head, up to and including the blank line
		want int
	}{
		{16 << 10, http.StatusOK},
		{16<<10 + 1, http.StatusRequestHeaderFieldsTooLarge},
		{20 << 10, http.StatusRequestHeaderFieldsTooLarge},
	} {
		t.Run(fmt.Sprint("a head of ", tt.size, " bytes"), func(t *testing.T) {
			head := "GET /v1/pets HTTP/1.1\r\nHost: " + p.addr + "\r\nAuthorization: Bearer " + key + "\r\nX-Pad: "
			const end = "\r\nConnection: close\r\n\r\n"
			req := head + strings.Repeat("p", tt.size-len(head)-len(end)) + end
			if resp, _, _ := exchange(t, p.addr, req); resp.StatusCode != tt.want {
				t.Errorf("a head of %d bytes answered %s; want %d", tt.size, resp.Status, tt.want)
			}
		})
	}
}

// holdCreate sends a create of body with Expect: 100-continue, and half of
// body after 100 Continue: the create is then in flight. It returns the
// connection and the reader of its answers.
func holdCreate(t *testing.T, p *serverProcess, key, body string) (net.Conn, *bufio.Reader) {
	t.Helper()
	conn := dial(t, p.addr, 30*time.Second)
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\n"+
		"Content-Type: application/json\r\nContent-Length: %d\r\nExpect: 100-continue\r\n\r\n", p.path, p.addr, key, len(body))
	answer := bufio.NewReader(conn)
	if line, err := answer.ReadString('\n'); err != nil || line != "HTTP/1.1 100 Continue\r\n" {
		t.Fatalf("waiting for 100 Continue: read %q, %v", line, err)
	}
	if line, err := answer.ReadString('\n'); err != nil || line != "\r\n" {
		t.Fatalf("after 100 Continue: read %q, %v", line, err)
	}
	if _, err := io.WriteString(conn, body[:len(body)/2]); err != nil {
		t.Fatal(err)
	}
	return conn, answer
}

// TestShutdownSignals signals the server with a create in flight: new
// connections are refused; on one signal the create completes with 201 and
// the process exits 0; a second makes it exit at once with exitAtOnce,
// saying so, and closes the held connection without an answer.
func TestShutdownSignals(t *testing.T) {
	bin := buildServer(t)
	term, intr := syscall.SIGTERM, syscall.SIGINT
	for _, sigs := range [][]syscall.Signal{{term}, {intr}, {term, term}, {intr, intr}, {term, intr}} {
		t.Run(fmt.Sprint(sigs), func(t *testing.T) {
			const key = "shutdown-key"
			p := startServer(t, bin, key, nil, "-shutdown-timeout", "1m")
			body := `{"name":"Slow Sam","categoryId":7,"status":"pending"}`
			conn, answer := holdCreate(t, p, key, body)
			if err := p.cmd.Process.Signal(sigs[0]); err != nil {
				t.Fatal(err)
			}
			if err := refused(p.addr, 10*time.Second); err != nil {
				t.Fatalf("after %v, while a request was in flight: %v", sigs[0], err)
			}
			select {
			case <-p.exited:
				t.Fatalf("the process exited (%v) on %v, with a request in flight; its log:\n%s", p.err, sigs[0], p.stderr)
			case <-time.After(200 * time.Millisecond):
			}
			if len(sigs) == 2 {
				if err := p.cmd.Process.Signal(sigs[1]); err != nil {
					t.Fatal(err)
				}
				if code := p.wait(t, 10*time.Second); code != exitAtOnce {
					t.Errorf("after a second signal the process exited with %d; want %d", code, exitAtOnce)
				}
				want := fmt.Sprintf(`level=ERROR msg="petstore: second signal during shutdown; exiting at once, abandoning requests in flight" signal=%s`, sigs[1])
				if log := p.stderr.String(); !strings.Contains(log, want) || strings.Contains(log, "petstore: stopped") {
					t.Errorf("the log does not say %s, or says that the server stopped cleanly:\n%s", want, log)
				}
				got, err := io.ReadAll(answer)
				var netErr net.Error
				if len(got) > 0 || (errors.As(err, &netErr) && netErr.Timeout()) {
					t.Errorf("the connection of the abandoned create read %q, %v; want it closed without an answer", got, err)
				}
				return
			}
			if _, err := conn.Write([]byte(body[len(body)/2:])); err != nil {
				t.Fatalf("sending the rest of the body: %v", err)
			}
			resp, err := http.ReadResponse(answer, nil)
			if err != nil {
				t.Fatalf("the request in flight got no answer: %v; the log:\n%s", err, p.stderr)
			}
			var got petstore.Pet
			err = json.NewDecoder(resp.Body).Decode(&got)
			resp.Body.Close()
			want := petstore.NewPet{Name: "Slow Sam", CategoryID: 7, Status: petstore.StatusPending}
			if resp.StatusCode != http.StatusCreated || err != nil || got.NewPet != want || got.ID < 1 {
				t.Errorf("the request in flight answered %s, %+v (%v); want 201, %+v with a positive ID", resp.Status, got, err, want)
			}
			if code := p.wait(t, 10*time.Second); code != 0 || !strings.Contains(p.stderr.String(), "petstore: stopped") {
				t.Errorf("the process exited with %d, want 0 and a log that says it stopped:\n%s", code, p.stderr)
			}
			if c, err := net.DialTimeout("tcp", p.addr, time.Second); err == nil {
				c.Close()
				t.Errorf("after the process exited, a connection to %s was accepted", p.addr)
			}
		})
	}
}

// TestSendBuffer: the API's listener gives each connection a fixed kernel
// send buffer of sendBuffer (which Linux doubles for its bookkeeping), so
// that a client that never reads cannot make the server encrypt and the
// kernel hold megabytes for it.
func TestSendBuffer(t *testing.T) {
	ln, err := listenConfig.Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	conn, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	raw, err := conn.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var size int
	if err := raw.Control(func(fd uintptr) { size, err = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_SNDBUF) }); err != nil {
		t.Fatal(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if size != 2*sendBuffer && size != sendBuffer {
		t.Errorf("an accepted connection's send buffer is %d bytes; want %d (Linux reports twice what was set)", size, 2*sendBuffer)
	}
}
