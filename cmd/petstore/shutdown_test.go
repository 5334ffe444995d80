package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/petstore-go/petstore"
)

// holdCreate sends a create of body with Expect: 100-continue, and half of
// body after 100 Continue: the create is then in flight. It returns the
// connection and the reader of its answers.
func holdCreate(t *testing.T, p *serverProcess, key, body string) (net.Conn, *bufio.Reader) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", p.addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if err := conn.SetDeadline(time.Now().Add(30 * time.Second)); err != nil {
		t.Fatal(err)
	}
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
