package pgtest

import (
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/petstore-go/petstore/internal/testkit/daemon"
)

// PgBouncer starts PgBouncer in transaction mode in front of the server at
// URL, on a free port of 127.0.0.1, as a child of the test (as the user
// postgres when the test runs as root, which it refuses) stopped when the
// test ends, and returns the URL of the same database through it. It skips
// the test (see skip) when PgBouncer is not installed. Each of settings is
// a line "name = value" of pgbouncer.ini, read after the defaults and so
// taking their place.
func PgBouncer(t *testing.T, settings ...string) string {
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
	target := fmt.Sprintf("host=%s user=%s", server.Hostname(), user)
	if port := server.Port(); port != "" {
		target += " port=" + port
	}
	if password, _ := server.User.Password(); password != "" {
		target += " password=" + password
	}
	port := FreePort(t)
	dir := t.TempDir()
	// Every database of the server, under its own name; trust needs the
	// user in auth_file all the same. Two server connections at least, taken
	// in turn, so that a transaction lands on another session than the one
	// before it whatever the load: what breaks on that breaks every time.
	ini := fmt.Sprintf(`[databases]
* = %s
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = %d
unix_socket_dir =
auth_type = trust
auth_file = %s
pool_mode = transaction
max_client_conn = 500
default_pool_size = 20
min_pool_size = 2
server_round_robin = 1
`, target, port, filepath.Join(dir, "userlist.txt")) + strings.Join(settings, "\n") + "\n"

	args := []string{filepath.Join(dir, "pgbouncer.ini")}
	if os.Geteuid() == 0 {
		// PgBouncer switches to this user itself; it must read the files.
		args = append([]string{"-u", "postgres"}, args...)
		openTempDir(t, dir)
	}
	for name, text := range map[string]string{"pgbouncer.ini": ini, "userlist.txt": fmt.Sprintf("%q %q\n", user, "")} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	p, err := daemon.Start(exec.Command(bin, args...), filepath.Join(dir, "pgbouncer.log"), addr, 30*time.Second)
	if err != nil {
		t.Fatalf("starting PgBouncer: %v", err)
	}
	t.Cleanup(p.Stop) // stops at once, dropping any client left
	through := *server
	through.Host = addr
	q := through.Query()
	q.Set("sslmode", "disable") // PgBouncer offers no TLS here
	through.RawQuery = q.Encode()
	return through.String()
}
