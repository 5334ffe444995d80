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

// holdCreate sends a create of body to the server p with key, its head with
// Expect: 100-continue and then half of body once 100 Continue says that
// the handler reads it: the create is then in flight. It returns the
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

// TestShutdownFinishesRequests starts the server as a process, begins a
// create whose body arrives slowly, and signals the process once the
// handler reads the body, while the rest is still to come: the create
// completes with 201, new connections are refused from then on, and the
// process exits 0.
func TestShutdownFinishesRequests(t *testing.T) {
	bin := buildServer(t)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			const key = "shutdown-key"
			p := startServer(t, bin, key, nil)

			// The request: headers and half of the body now, the rest after
			// the signal.
			body := `{"name":"Slow Sam","categoryId":7,"status":"pending"}`
			conn, answer := holdCreate(t, p, key, body)
			half := len(body) / 2

			if err := p.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}

			// While the request is in flight, the listener closes: new
			// connections are refused.
			if err := refused(p.addr, 10*time.Second); err != nil {
				t.Errorf("after %v, while a request was in flight: %v", sig, err)
			}
			select {
			case <-p.exited:
				t.Fatalf("the process exited (%v) before the request in flight completed; its log:\n%s", p.err, p.stderr)
			default:
			}

			if _, err := conn.Write([]byte(body[half:])); err != nil {
				t.Fatalf("sending the rest of the body after %v: %v", sig, err)
			}
			resp, err := http.ReadResponse(answer, nil)
			if err != nil {
				t.Fatalf("the request in flight when %v arrived got no answer: %v; the log:\n%s", sig, err, p.stderr)
			}
			var got petstore.Pet
			err = json.NewDecoder(resp.Body).Decode(&got)
			resp.Body.Close()
			if resp.StatusCode != http.StatusCreated || err != nil {
				t.Fatalf("the request in flight when %v arrived answered %s (decoding: %v)", sig, resp.Status, err)
			}
			want := petstore.NewPet{Name: "Slow Sam", CategoryID: 7, Status: petstore.StatusPending}
			if got.NewPet != want || got.ID < 1 {
				t.Errorf("the pet created during shutdown is %+v; want %+v with a positive ID", got, want)
			}

			if code := p.wait(t, 10*time.Second); code != 0 {
				t.Errorf("after %v the process exited with %d, want 0; its log:\n%s", sig, code, p.stderr)
			}
			if !strings.Contains(p.stderr.String(), "petstore: stopped") {
				t.Errorf("the log does not say that the server stopped cleanly:\n%s", p.stderr)
			}
			if c, err := net.DialTimeout("tcp", p.addr, time.Second); err == nil {
				c.Close()
				t.Errorf("after the process exited, a connection to %s was accepted", p.addr)
			}
		})
	}
}

// TestShutdownSecondSignal holds a create in flight, its body half sent,
// and signals the server process twice: the first signal starts a graceful
// shutdown, which would wait for the create up to -shutdown-timeout (a
// minute here); the second makes the process exit at once with status 1,
// saying so, and the held connection is closed without an answer.
func TestShutdownSecondSignal(t *testing.T) {
	bin := buildServer(t)
	for _, sigs := range [][2]syscall.Signal{
		{syscall.SIGTERM, syscall.SIGTERM},
		{syscall.SIGINT, syscall.SIGINT},
		{syscall.SIGTERM, syscall.SIGINT},
	} {
		t.Run(sigs[0].String()+", "+sigs[1].String(), func(t *testing.T) {
			const key = "signal-key"
			p := startServer(t, bin, key, nil, "-shutdown-timeout", "1m")

			body := `{"name":"Held","categoryId":1,"status":"available"}`
			_, answer := holdCreate(t, p, key, body)

			if err := p.cmd.Process.Signal(sigs[0]); err != nil {
				t.Fatal(err)
			}
			// Once new connections are refused, the shutdown has begun and
			// waits for the create.
			if err := refused(p.addr, 10*time.Second); err != nil {
				t.Fatalf("after %v: %v", sigs[0], err)
			}
			select {
			case <-p.exited:
				t.Fatalf("the process exited (%v) on the first signal, with a request in flight; its log:\n%s", p.err, p.stderr)
			case <-time.After(200 * time.Millisecond):
			}

			if err := p.cmd.Process.Signal(sigs[1]); err != nil {
				t.Fatal(err)
			}
			if code := p.wait(t, 10*time.Second); code != exitAtOnce {
				t.Errorf("after a second signal the process exited with %d; want %d", code, exitAtOnce)
			}
			log := p.stderr.String()
			want := fmt.Sprintf(`level=ERROR msg="petstore: second signal during shutdown; exiting at once, abandoning requests in flight" signal=%s`, sigs[1])
			if !strings.Contains(log, want) {
				t.Errorf("the log does not say %s:\n%s", want, log)
			}
			if strings.Contains(log, "petstore: stopped") {
				t.Errorf("the log says the server stopped cleanly:\n%s", log)
			}
			got, err := io.ReadAll(answer)
			var netErr net.Error
			if len(got) > 0 || (errors.As(err, &netErr) && netErr.Timeout()) {
				t.Errorf("the connection of the abandoned create read %q, %v; want it closed without an answer", got, err)
			}
		})
	}
}
