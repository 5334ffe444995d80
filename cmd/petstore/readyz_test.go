package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestReadyzPostgres runs the server on a throwaway PostgreSQL cluster and
// stops the cluster under it: /readyz answers 200, then 503 with a reason
// while the database is down (while /healthz still answers 200), then 200
// again once it is back, all in the same process.
//
// The test creates the cluster with initdb in a temporary directory and
// serves it on a free port of its own; it is skipped where PostgreSQL's
// server binaries are not installed.
func TestReadyzPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping a test that builds and runs the server and a PostgreSQL cluster as processes in -short mode")
	}
	cluster := newReadyzCluster(t)
	cluster.start(t)
	bin := buildServer(t)
	p := startServer(t, bin, "readyz-key", nil, "-postgres", cluster.url(), "-admin-addr", "127.0.0.1:0")
	admin := adminURL(t, p)

	// probe returns what /readyz answers.
	probe := func() (int, probeBody) {
		status, body := adminDo(t, adminRequest{method: http.MethodGet, url: admin + "/readyz"})
		var b probeBody
		if err := json.Unmarshal(body, &b); err != nil {
			t.Fatalf("/readyz answered %d with %q, not JSON: %v", status, body, err)
		}
		return status, b
	}
	// waitFor polls /readyz every 100ms, for 30s at most, until it
	// answers want, and returns the body.
	waitFor := func(when string, want int) probeBody {
		t.Helper()
		ticker := time.NewTicker(100 * time.Millisecond)
		defer ticker.Stop()
		deadline := time.NewTimer(30 * time.Second)
		defer deadline.Stop()
		for attempt := 1; ; attempt++ {
			status, body := probe()
			if status == want {
				t.Logf("%s: /readyz answered %d after %d attempts: %+v", when, status, attempt, body)
				return body
			}
			if status != http.StatusOK && status != http.StatusServiceUnavailable {
				t.Fatalf("%s: /readyz answered %d %+v; want 200 or 503", when, status, body)
			}
			select {
			case <-ticker.C:
			case <-deadline.C:
				t.Fatalf("%s: /readyz still answers %d %+v after 30s; want %d; the server's log:\n%s", when, status, body, want, p.stderr)
			}
		}
	}

	if status, body := probe(); status != http.StatusOK || body.Status != "ok" {
		t.Fatalf("database up: /readyz answered %d %+v, want 200 ok", status, body)
	}

	cluster.stop(t)
	down := waitFor("database down", http.StatusServiceUnavailable)
	if down.Status != "unavailable" || !strings.HasPrefix(down.Reason, "the store ") {
		t.Errorf("database down: /readyz body %+v; want status unavailable and a reason about the store", down)
	}
	// Again, now that the pool's connections are gone and new ones are
	// refused.
	for i := range 3 {
		if status, body := probe(); status != http.StatusServiceUnavailable || body.Status != "unavailable" {
			t.Errorf("database down, probe %d more: /readyz answered %d %+v, want 503 unavailable", i+1, status, body)
		}
	}
	if status, body := adminDo(t, adminRequest{method: http.MethodGet, url: admin + "/healthz"}); status != http.StatusOK {
		t.Errorf("database down: /healthz answered %d %s; want 200, as the process runs", status, body)
	}

	cluster.start(t)
	if up := waitFor("database back", http.StatusOK); up.Status != "ok" {
		t.Errorf("database back: /readyz body %+v, want status ok", up)
	}
	if !strings.Contains(p.stderr.String(), "petstore: not ready") {
		t.Errorf("the log does not say when the server was not ready:\n%s", p.stderr)
	}
}

// readyzCluster is a throwaway PostgreSQL cluster.
type readyzCluster struct {
	bin  string   // the directory of initdb, pg_ctl and postgres
	as   []string // the command prefix that runs a command as the cluster's owner
	data string   // the data directory
	log  string   // the server's log file
	port int
}

// newReadyzCluster creates a cluster with initdb in a temporary directory,
// owned by the user "postgres" when the test runs as root (initdb refuses
// root), on a free port. It skips the test when the server binaries are
// missing, or when it runs as root and cannot run them as another user. The
// cluster is stopped when the test ends.
func newReadyzCluster(t *testing.T) *readyzCluster {
	t.Helper()
	bin := readyzBinaries()
	if bin == "" {
		t.Skip("PostgreSQL's server binaries (initdb, pg_ctl) are not installed, in /usr/lib/postgresql/*/bin or on PATH, " +
			"so the test that stops and starts a database under the server cannot run; install them (Debian: apt-get install postgresql)")
	}
	s := &readyzCluster{bin: bin}
	dir := t.TempDir()
	if os.Geteuid() == 0 {
		runuser, err := exec.LookPath("runuser")
		owner, uerr := user.Lookup("postgres")
		if err != nil || uerr != nil {
			t.Skipf("running as root, and initdb refuses root; no way to run it as the user postgres (runuser: %v; user: %v)", err, uerr)
		}
		uid, _ := strconv.Atoi(owner.Uid)
		gid, _ := strconv.Atoi(owner.Gid)
		// The owner must reach the directory: open the test's temporary
		// directories to it, and give it the cluster's.
		for _, d := range []string{filepath.Dir(dir), dir} {
			if err := os.Chmod(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		dir = filepath.Join(dir, "pg")
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
		s.as = []string{runuser, "-u", "postgres", "--"}
	}
	s.data = filepath.Join(dir, "data")
	s.log = filepath.Join(dir, "server.log")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.port = ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	s.run(t, "initdb", "-D", s.data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-locale", "--no-sync")
	t.Cleanup(func() {
		if _, err := os.Stat(filepath.Join(s.data, "postmaster.pid")); err == nil {
			s.run(t, "pg_ctl", "-D", s.data, "-m", "immediate", "-w", "stop")
		}
	})
	return s
}

// readyzBinaries returns the directory of the newest installed PostgreSQL
// server binaries, or "" when there are none.
func readyzBinaries() string {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool {
		vi, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[i])))
		vj, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[j])))
		return vi > vj
	})
	for _, d := range dirs {
		if readyzHas(d, "initdb") && readyzHas(d, "pg_ctl") {
			return d
		}
	}
	if initdb, err := exec.LookPath("initdb"); err == nil && readyzHas(filepath.Dir(initdb), "pg_ctl") {
		return filepath.Dir(initdb)
	}
	return ""
}

func readyzHas(dir, name string) bool {
	fi, err := os.Stat(filepath.Join(dir, name))
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// url returns the connection string of the cluster's database "postgres".
func (s *readyzCluster) url() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", s.port)
}

// start starts the server and waits until it accepts connections. It
// listens on 127.0.0.1 only and on no Unix socket.
func (s *readyzCluster) start(t *testing.T) {
	t.Helper()
	opts := fmt.Sprintf("-p %d -c listen_addresses=127.0.0.1 -c unix_socket_directories='' -c fsync=off", s.port)
	s.run(t, "pg_ctl", "-D", s.data, "-l", s.log, "-o", opts, "-w", "-t", "60", "start")
}

// stop stops the server the way an operator would for maintenance: it
// disconnects every client and shuts down cleanly.
func (s *readyzCluster) stop(t *testing.T) {
	t.Helper()
	s.run(t, "pg_ctl", "-D", s.data, "-m", "fast", "-w", "-t", "60", "stop")
}

// run runs one of the server binaries as the cluster's owner and fails the
// test, with the server's log, when it fails.
func (s *readyzCluster) run(t *testing.T, name string, args ...string) {
	t.Helper()
	argv := append(append(s.as[:len(s.as):len(s.as)], filepath.Join(s.bin, name)), args...)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.WaitDelay = 5 * time.Second // the server it starts must not hold the output open
	if out, err := cmd.CombinedOutput(); err != nil {
		serverLog, _ := os.ReadFile(s.log)
		t.Fatalf("%s: %v\n%s\nserver log:\n%s", strings.Join(argv, " "), err, out, serverLog)
	}
}
