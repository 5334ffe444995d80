package pgtest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// PgBouncer starts PgBouncer in transaction mode in front of the server at
// URL, on a free port of 127.0.0.1, with a configuration and a user list of
// its own, and returns the URL of the same database through it. PgBouncer
// runs in the foreground as a child of the test (as the user "postgres"
// when the test runs as root, which it refuses) and is stopped when the
// test ends. It skips the test when PgBouncer is not installed, and fails
// it under CI=true.
func PgBouncer(t *testing.T) string {
	t.Helper()
	server, err := url.Parse(URL(t))
	if err != nil {
		t.Fatalf("%s: %v", URLVar, err)
	}
	bin, err := exec.LookPath("pgbouncer")
	if err != nil {
		bin = "/usr/sbin/pgbouncer"
	}
	if !executable(filepath.Dir(bin), filepath.Base(bin)) {
		skip(t, "PgBouncer is not installed (on PATH or at /usr/sbin/pgbouncer), so the tests through a pooler "+
			"in transaction mode cannot run; install it (Debian: apt-get install pgbouncer)")
	}
	user := server.User.Username()
	password, _ := server.User.Password()
	host, port := server.Hostname(), server.Port()
	if port == "" {
		port = "5432"
	}
	database := strings.TrimPrefix(server.Path, "/")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	listen := ln.Addr().(*net.TCPAddr).Port
	ln.Close()

	secret := ""
	if password != "" {
		secret = " password=" + password
	}
	dir := t.TempDir()
	ini := fmt.Sprintf(`[databases]
%s = host=%s port=%s dbname=%s user=%s%s

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = %d
unix_socket_dir =
auth_type = trust
auth_file = %s
pool_mode = transaction
max_client_conn = 500
default_pool_size = 20
`, database, host, port, database, user, secret, listen, filepath.Join(dir, "userlist.txt"))
	userlist := fmt.Sprintf("%q %q\n", user, "")
	args := []string{filepath.Join(dir, "pgbouncer.ini")}
	if os.Geteuid() == 0 {
		// PgBouncer switches to this user itself; it must read the files.
		args = append([]string{"-u", "postgres"}, args...)
		for _, d := range []string{filepath.Dir(dir), dir} {
			if err := os.Chmod(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	for name, text := range map[string]string{"pgbouncer.ini": ini, "userlist.txt": userlist} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	var out syncBuffer
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting PgBouncer: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM) // stop at once, dropping any client left
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	addr := fmt.Sprintf("127.0.0.1:%d", listen)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
		if err == nil {
			conn.Close()
			break
		}
		select {
		case err := <-exited:
			t.Fatalf("PgBouncer exited at start (%v):\n%s", err, out.String())
		case <-ctx.Done():
			t.Fatalf("PgBouncer did not listen on %s within 30s:\n%s", addr, out.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	through := *server
	through.Host = addr
	q := through.Query()
	q.Set("sslmode", "disable") // PgBouncer offers no TLS here
	through.RawQuery = q.Encode()
	return through.String()
}

// syncBuffer is a bytes.Buffer that a child process and the test may use at
// once.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
