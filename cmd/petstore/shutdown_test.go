package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/petstore-go/petstore"
)

// TestShutdownFinishesRequests starts the server as a process, begins a
// create whose body arrives slowly, and signals the process while the body
// is still coming: the create completes with 201, new connections are
// refused from then on, and the process exits 0.
func TestShutdownFinishesRequests(t *testing.T) {
	bin := procBuild(t)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			const key = "shutdown-key"
			p := procStart(t, bin, key, "-addr", "127.0.0.1:0")

			// The request: headers and half of the body now, the rest after
			// the signal.
			body := `{"name":"Slow Sam","categoryId":7,"status":"pending"}`
			conn, err := net.DialTimeout("tcp", p.addr, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if err := conn.SetDeadline(time.Now().Add(30 * time.Second)); err != nil {
				t.Fatal(err)
			}
			head := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\n"+
				"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n", p.path, p.addr, key, len(body))
			half := len(body) / 2
			if _, err := conn.Write([]byte(head + body[:half])); err != nil {
				t.Fatal(err)
			}
			time.Sleep(200 * time.Millisecond) // let the server read the headers and start the handler

			signalled := time.Now()
			if err := p.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}

			// While the request is in flight, the listener closes: new
			// connections are refused.
			if err := procRefused(p.addr, 10*time.Second); err != nil {
				t.Errorf("after %v, while a request was in flight: %v", sig, err)
			}
			select {
			case <-p.exited:
				t.Fatalf("the process exited (%v) before the request in flight completed; its log:\n%s", p.err, p.stderr)
			default:
			}

			time.Sleep(time.Until(signalled.Add(300 * time.Millisecond)))
			if _, err := conn.Write([]byte(body[half:])); err != nil {
				t.Fatalf("sending the rest of the body after %v: %v", sig, err)
			}
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
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

// procBuild builds cmd/petstore into a temporary directory and returns the
// executable's path.
func procBuild(t *testing.T) string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("building cmd/petstore needs the go command on PATH: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "petstore")
	cmd := exec.Command(gobin, "build", "-o", bin, ".")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// procServer is the server running as a process.
type procServer struct {
	cmd    *exec.Cmd
	addr   string // host:port it listens on
	path   string // the collection's path
	stderr *procBuffer

	exited chan struct{} // closed when the process has exited
	err    error         // what Wait returned; read after exited is closed
}

// procStart starts the executable bin with args, accepting the API key
// key, and waits until it prints the URL it serves. Variables of the
// environment named PETSTORE_* other than the key are left out, so that the
// server uses its defaults. The process is killed if it still runs when
// the test ends.
func procStart(t *testing.T, bin, key string, args ...string) *procServer {
	t.Helper()
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PETSTORE_") {
			env = append(env, kv)
		}
	}
	stdout := &procBuffer{line: "serving ", found: make(chan string, 1)}
	p := &procServer{
		cmd:    exec.Command(bin, args...),
		stderr: &procBuffer{},
		exited: make(chan struct{}),
	}
	p.cmd.Env = append(env, "PETSTORE_API_KEYS="+key)
	p.cmd.Stdout = stdout
	p.cmd.Stderr = p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			p.cmd.Process.Kill()
			<-p.exited
		}
	})

	var url string
	select {
	case url = <-stdout.found:
	case <-p.exited:
		t.Fatalf("the server exited (%v) before printing its URL; stdout:\n%s\nstderr:\n%s", p.err, stdout, p.stderr)
	case <-time.After(30 * time.Second):
		t.Fatalf("the server printed no URL in 30s; stdout:\n%s\nstderr:\n%s", stdout, p.stderr)
	}
	rest, ok := strings.CutPrefix(url, "http://")
	i := strings.IndexByte(rest, '/')
	if !ok || i < 0 {
		t.Fatalf("the server printed %q; want serving http://HOST:PORT/PATH", url)
	}
	p.addr, p.path = rest[:i], rest[i:]
	return p
}

// wait waits up to bound for the process to exit and returns its exit
// code; it fails the test if the process does not exit in time or is
// killed by a signal.
func (p *procServer) wait(t *testing.T, bound time.Duration) int {
	t.Helper()
	select {
	case <-p.exited:
	case <-time.After(bound):
		t.Fatalf("the process did not exit within %v; its log:\n%s", bound, p.stderr)
	}
	var exit *exec.ExitError
	switch {
	case p.err == nil:
		return 0
	case errors.As(p.err, &exit) && exit.ExitCode() >= 0:
		return exit.ExitCode()
	}
	t.Fatalf("the process ended with %v; its log:\n%s", p.err, p.stderr)
	return -1
}

// procRefused dials addr until a connection is refused, and returns an
// error if none is within bound. Connections that succeed meanwhile are
// closed at once.
func procRefused(addr string, bound time.Duration) error {
	deadline := time.Now().Add(bound)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if errors.Is(err, syscall.ECONNREFUSED) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("dialing %s: %v; want the connection refused", addr, err)
		}
		c.Close()
		if time.Now().After(deadline) {
			return fmt.Errorf("%s still accepted connections after %v", addr, bound)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// procBuffer collects a process's output. When line is set, it sends the
// rest of the first line that starts with it on found. It is safe for
// concurrent use.
type procBuffer struct {
	line  string
	found chan string

	mu   sync.Mutex
	buf  bytes.Buffer
	sent bool
}

func (b *procBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.Write(p)
	if b.line != "" && !b.sent {
		for l := range strings.Lines(b.buf.String()) {
			if rest, ok := strings.CutPrefix(l, b.line); ok && strings.HasSuffix(rest, "\n") {
				b.found <- strings.TrimSpace(rest)
				b.sent = true
				break
			}
		}
	}
	return len(p), nil
}

func (b *procBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
