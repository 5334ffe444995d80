// Package redistest starts a redis-server for tests, as httptest starts
// an HTTP server.
package redistest

import (
	"bufio"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Start starts redis-server on a free loopback port, with its files in a
// temporary directory and nothing saved, stops it when the test ends, and
// returns its URL, such as "redis://127.0.0.1:40123". Without redis-server
// on the PATH the test is skipped, with a message that says how to install
// it; under CI=true it fails instead, since CI installs it. args are
// added to the server's command line, such as "--enable-debug-command",
// "local".
func Start(tb testing.TB, args ...string) string {
	tb.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		msg := "redis-server is not installed (apt-get install -y redis-server): " + err.Error()
		if os.Getenv("CI") == "true" {
			tb.Fatal(msg)
		}
		tb.Skip(msg)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0") // for a loopback port that is free a moment ago
	if err != nil {
		tb.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(bin, append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", tb.TempDir(),
		"--save", "", "--appendonly", "no", "--protected-mode", "yes"}, args...)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	ready := make(chan bool, 1)
	go func() {
		s, found := bufio.NewScanner(out), false
		for !found && s.Scan() {
			found = strings.Contains(s.Text(), "Ready to accept connections")
		}
		ready <- found
		io.Copy(io.Discard, out) // so that the server never blocks on writing its log
	}()
	select {
	case ok := <-ready:
		if !ok {
			tb.Fatal("redis-server exited before it was ready")
		}
	case <-time.After(10 * time.Second):
		tb.Fatal("redis-server was not ready within 10 s")
	}
	return "redis://127.0.0.1:" + strconv.Itoa(port)
}
