package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/internal/testkit/syncbuf"
)

// buildServer returns the path of cmd/petstore built, once for all the
// tests, into builtDir. In -short mode it skips the test.
func buildServer(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("skipping a test that builds and runs the server as a process in -short mode")
	}
	bin, err := builtServer()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

var builtServer = sync.OnceValues(func() (string, error) {
	bin := filepath.Join(builtDir, "petstore")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
})

// builtDir is the directory of the server that the tests build.
var builtDir string

func TestMain(m *testing.M) {
	var err error
	if builtDir, err = os.MkdirTemp("", "petstore-test-"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(builtDir)
	os.Exit(code)
}

// serverProcess is cmd/petstore running as a process.
type serverProcess struct {
	cmd     *exec.Cmd
	addr    string // host:port it listens on
	baseURL string // such as http://127.0.0.1:41234/v1, or https://
	path    string // the collection's path, such as /v1/pets
	stdout  *syncbuf.Buffer
	stderr  *syncbuf.Buffer

	exited chan struct{} // closed when the process has exited
	err    error         // what Wait returned; read after exited is closed
}

// servingLine matches the line on which the server says where it serves.
var servingLine = regexp.MustCompile(`(?m)^serving (https?://([^/\s]+)(/\S*)?)/pets$`)

// startServer starts bin in a new directory on a free port of 127.0.0.1,
// with args, the API key key, the variables in env and the callers'
// budgets off (noBudgets), and waits until it has printed its URL and its
// start-up log. When the test ends, it is stopped with SIGTERM, or killed.
func startServer(t *testing.T, bin, key string, env []string, args ...string) *serverProcess {
	t.Helper()
	return startServerIn(t, t.TempDir(), bin, key, env, args...)
}

// startServerIn is startServer in the working directory dir.
func startServerIn(t *testing.T, dir, bin, key string, env []string, args ...string) *serverProcess {
	t.Helper()
	p := &serverProcess{
		cmd: newCommand(context.Background(), dir, bin, append(append([]string{"PETSTORE_API_KEYS=" + key}, noBudgets...), env...),
			append([]string{"-addr", "127.0.0.1:0"}, args...)...),
		stdout: &syncbuf.Buffer{},
		stderr: &syncbuf.Buffer{},
		exited: make(chan struct{}),
	}
	p.cmd.Stdout, p.cmd.Stderr = p.stdout, p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		p.cmd.Process.Signal(syscall.SIGTERM) // an error if it has exited, which the select sees
		select {
		case <-p.exited:
		case <-time.After(10 * time.Second):
			p.cmd.Process.Kill()
			<-p.exited
			t.Errorf("the server did not stop within 10s of SIGTERM; its log:\n%s", p.stderr)
		}
	})
	// The start-up log comes through another pipe: wait for its last line.
	waitUntil(t, p, "the server prints its URL", func() bool {
		select {
		case <-p.exited:
			t.Fatalf("the server exited (%v) before printing its URL; stdout:\n%s\nstderr:\n%s", p.err, p.stdout, p.stderr)
		default:
		}
		return servingLine.MatchString(p.stdout.String()) && strings.Contains(p.stderr.String(), "petstore: listening")
	})
	m := servingLine.FindStringSubmatch(p.stdout.String())
	p.baseURL, p.addr, p.path = m[1], m[2], m[3]+"/pets"
	return p
}

// readFile returns what the file name holds, failing the test if it
// cannot be read.
func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// waitUntil polls cond until it holds, failing the test after 30s.
func waitUntil(t *testing.T, p *serverProcess, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up after 30s waiting until %s; stdout:\n%s\nstderr:\n%s", what, p.stdout, p.stderr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// newCommand runs bin with args in dir, with the variables in env and none
// of the test's own PETSTORE_* variables, killed when ctx is done.
func newCommand(ctx context.Context, dir, bin string, env []string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PETSTORE_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	return cmd
}

// runCommand runs newCommand for a minute at most.
func runCommand(t *testing.T, dir, bin string, env []string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := newCommand(ctx, dir, bin, env, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	return out.String(), errOut.String(), err
}

// mustRun is runCommand that fails the test when the command fails.
func mustRun(t *testing.T, dir, bin string, env []string, args ...string) string {
	t.Helper()
	out, errOut, err := runCommand(t, dir, bin, env, args...)
	if err != nil {
		t.Fatalf("petstore %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, out, errOut)
	}
	return out
}

// runToExit runs the server bin on 127.0.0.1 with args and the variables in
// env, in a directory of its own, and returns its exit code and output.
func runToExit(t *testing.T, bin string, env []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	stdout, stderr, err := runCommand(t, t.TempDir(), bin, env, append([]string{"-addr", "127.0.0.1:0"}, args...)...)
	return exitCode(t, err, stderr), stdout, stderr
}

// wait waits up to bound for the process to exit and returns its exit code.
func (p *serverProcess) wait(t *testing.T, bound time.Duration) int {
	t.Helper()
	select {
	case <-p.exited:
	case <-time.After(bound):
		t.Fatalf("the process did not exit within %v; its log:\n%s", bound, p.stderr)
	}
	return exitCode(t, p.err, p.stderr.String())
}

// stop stops the process with SIGTERM and fails the test unless it exits 0
// within 30s.
func (p *serverProcess) stop(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(t, 30*time.Second); code != 0 {
		t.Fatalf("the server exited with %d after SIGTERM; its log:\n%s", code, p.stderr)
	}
}

// exitCode returns the exit code of a process that ended with err, and
// fails the test if it was killed by a signal or did not run.
func exitCode(t *testing.T, err error, log string) int {
	t.Helper()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit) && exit.ExitCode() >= 0:
		return exit.ExitCode()
	}
	t.Fatalf("the process ended with %v; its log:\n%s", err, log)
	return -1
}

// refused dials addr until a connection is refused, within bound. A reset
// (the backlog just as the listener closed) is dialled again.
func refused(addr string, bound time.Duration) error {
	deadline := time.Now().Add(bound)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		switch {
		case errors.Is(err, syscall.ECONNREFUSED):
			return nil
		case errors.Is(err, syscall.ECONNRESET):
		case err != nil:
			return fmt.Errorf("dialing %s: %v; want the connection refused", addr, err)
		default:
			c.Close()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s still accepted connections after %v", addr, bound)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// noBudgets turns the callers' budgets off.
var noBudgets = []string{readLimitVar + "=off", createLimitVar + "=off"}

// apiRequest is a request that the process tests send.
type apiRequest struct {
	method, url, key, body string
	header                 map[string]string
}

// createRequest creates p through the server at baseURL, with the
// Idempotency-Key idemKey unless it is empty.
func createRequest(baseURL, key, idemKey string, p petstore.NewPet) apiRequest {
	body, _ := json.Marshal(p) // a NewPet always encodes
	q := apiRequest{method: http.MethodPost, url: baseURL + "/pets", key: key, body: string(body)}
	if idemKey != "" {
		q.header = map[string]string{"Idempotency-Key": idemKey}
	}
	return q
}

// apiAnswer is the server's answer to one request, read in full.
type apiAnswer struct {
	status int
	header http.Header
	body   []byte
	tls    *tls.ConnectionState // nil over plain HTTP
	proto  string               // such as HTTP/2.0
}

// code returns the code of a JSON error body, or "" for another body.
func (a apiAnswer) code() string {
	var e struct{ Code string }
	if json.Unmarshal(a.body, &e) != nil {
		return ""
	}
	return e.Code
}

// pet decodes the body as a pet.
func (a apiAnswer) pet() (petstore.Pet, error) {
	var p petstore.Pet
	if err := json.Unmarshal(a.body, &p); err != nil {
		return petstore.Pet{}, fmt.Errorf("the body %q is not a pet: %v", a.body, err)
	}
	return p, nil
}

// replayed reports whether the answer says it replays an earlier create.
func (a apiAnswer) replayed() bool { return a.header.Get("Idempotent-Replayed") == "true" }

func (a apiAnswer) String() string {
	return fmt.Sprintf("%d Retry-After %q Idempotent-Replayed %q %s", a.status,
		a.header.Get("Retry-After"), a.header.Get("Idempotent-Replayed"), bytes.TrimSpace(a.body))
}

// send sends q with client and reads the answer in full.
func send(ctx context.Context, client *http.Client, q apiRequest) (apiAnswer, error) {
	r, err := http.NewRequestWithContext(ctx, q.method, q.url, strings.NewReader(q.body))
	if err != nil {
		return apiAnswer{}, err
	}
	if q.key != "" {
		r.Header.Set("Authorization", "Bearer "+q.key)
	}
	if q.body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	for k, v := range q.header {
		r.Header.Set(k, v)
	}
	resp, err := client.Do(r)
	if err != nil {
		return apiAnswer{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return apiAnswer{}, fmt.Errorf("%s %s: reading the body: %w", q.method, q.url, err)
	}
	return apiAnswer{status: resp.StatusCode, header: resp.Header, body: b, tls: resp.TLS, proto: resp.Proto}, nil
}

// mustSend is send within 10 seconds, failing the test without an answer.
func mustSend(t *testing.T, q apiRequest) apiAnswer {
	t.Helper()
	a, err := send(context.Background(), &http.Client{Timeout: 10 * time.Second}, q)
	if err != nil {
		t.Fatalf("%s %s: %v", q.method, q.url, err)
	}
	return a
}

// createPet sends createRequest.
func createPet(t *testing.T, baseURL, key, idemKey string, p petstore.NewPet) apiAnswer {
	t.Helper()
	return mustSend(t, createRequest(baseURL, key, idemKey, p))
}
