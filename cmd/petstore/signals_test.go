package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"
)

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
