package pgtest

import (
	"context"
	"fmt"
	"net"
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

// A Cluster is a throwaway PostgreSQL cluster, for tests that stop and start
// a database under a running server.
type Cluster struct {
	bin  string   // the directory of initdb, pg_ctl and postgres
	as   []string // the command prefix that runs a command as the cluster's owner
	data string   // the data directory
	log  string   // the server's log file
	port int
}

// NewCluster creates a cluster with initdb in a temporary directory, owned by
// the user "postgres" when the test runs as root (initdb refuses root), on a
// free port of 127.0.0.1. It skips the test when the server binaries are
// missing, or when it runs as root and cannot run them as another user (and
// fails it under CI=true). The cluster is not started; it is stopped, if it
// runs, when the test ends.
func NewCluster(t *testing.T) *Cluster {
	t.Helper()
	c := newCluster(t)
	c.run(t, "initdb", "-D", c.data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-locale", "--no-sync")
	return c
}

// newCluster returns a Cluster whose data directory is still to be made, in
// a temporary directory that the cluster's owner may write, on a free port,
// and stops the server, if it runs, when the test ends.
func newCluster(t *testing.T) *Cluster {
	t.Helper()
	bin := serverBinaries()
	if bin == "" {
		skip(t, "PostgreSQL's server binaries (initdb, pg_ctl) are not installed, in /usr/lib/postgresql/*/bin or on PATH, "+
			"so a test that stops and starts a database cannot run; install them (Debian: apt-get install postgresql)")
	}
	c := &Cluster{bin: bin}
	dir := t.TempDir()
	if os.Geteuid() == 0 {
		runuser, err := exec.LookPath("runuser")
		owner, uerr := user.Lookup("postgres")
		if err != nil || uerr != nil {
			skip(t, fmt.Sprintf("running as root, and initdb refuses root; no way to run it as the user postgres (runuser: %v; user: %v)", err, uerr))
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
		c.as = []string{runuser, "-u", "postgres", "--"}
	}
	c.data = filepath.Join(dir, "data")
	c.log = filepath.Join(dir, "server.log")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c.port = ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	t.Cleanup(func() {
		if _, err := os.Stat(filepath.Join(c.data, "postmaster.pid")); err == nil {
			c.run(t, "pg_ctl", "-D", c.data, "-m", "immediate", "-w", "stop")
		}
	})
	return c
}

// skip skips the test with msg, or, under CI=true, fails it: there a
// skipped database test must not pass for a tested one.
func skip(t *testing.T, msg string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// serverBinaries returns the directory of the newest installed PostgreSQL
// server binaries, or "" when there are none.
func serverBinaries() string {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool {
		vi, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[i])))
		vj, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[j])))
		return vi > vj
	})
	for _, d := range dirs {
		if executable(d, "initdb") && executable(d, "pg_ctl") {
			return d
		}
	}
	if initdb, err := exec.LookPath("initdb"); err == nil && executable(filepath.Dir(initdb), "pg_ctl") {
		return filepath.Dir(initdb)
	}
	return ""
}

func executable(dir, name string) bool {
	fi, err := os.Stat(filepath.Join(dir, name))
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// URL returns the connection string of the cluster's database "postgres".
func (c *Cluster) URL() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", c.port)
}

// Start starts the server and waits until it accepts connections. It
// listens on 127.0.0.1 only and on no Unix socket.
func (c *Cluster) Start(t *testing.T) {
	t.Helper()
	opts := fmt.Sprintf("-p %d -c listen_addresses=127.0.0.1 -c unix_socket_directories='' -c fsync=off", c.port)
	c.run(t, "pg_ctl", "-D", c.data, "-l", c.log, "-o", opts, "-w", "-t", "60", "start")
}

// Stop stops the server the way an operator would for maintenance: it
// disconnects every client and shuts down cleanly.
func (c *Cluster) Stop(t *testing.T) {
	t.Helper()
	c.run(t, "pg_ctl", "-D", c.data, "-m", "fast", "-w", "-t", "60", "stop")
}

// run runs one of the server binaries as the cluster's owner and fails the
// test, with the server's log, when it fails.
func (c *Cluster) run(t *testing.T, name string, args ...string) {
	t.Helper()
	argv := append(append(c.as[:len(c.as):len(c.as)], filepath.Join(c.bin, name)), args...)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.WaitDelay = 5 * time.Second // the server it starts must not hold the output open
	if out, err := cmd.CombinedOutput(); err != nil {
		serverLog, _ := os.ReadFile(c.log)
		t.Fatalf("%s: %v\n%s\nserver log:\n%s", strings.Join(argv, " "), err, out, serverLog)
	}
}
