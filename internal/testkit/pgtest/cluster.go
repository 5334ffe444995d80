package pgtest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A Cluster is a throwaway PostgreSQL cluster, for tests that stop and start
// a database under a running server.
type Cluster struct {
	bin, data, log string   // the directories of the binaries and the data, the server's log
	as             []string // the prefix that runs a command as the cluster's owner
	port           int
}

// NewCluster creates a cluster with initdb in a temporary directory, owned by
// the user "postgres" when the test runs as root (initdb refuses root), on a
// free port of 127.0.0.1. It skips the test (see skip) when it cannot run
// the server binaries. The cluster is not started; it is stopped, if it
// runs, when the test ends.
func NewCluster(t *testing.T) *Cluster {
	t.Helper()
	c := newCluster(t)
	c.run(t, "initdb", "-D", c.data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-locale", "--no-sync")
	return c
}

// newCluster returns a Cluster whose data directory is still to be made,
// stopped, if it runs, when the test ends.
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
		if _, uerr := user.Lookup("postgres"); err != nil || uerr != nil {
			skip(t, fmt.Sprintf("running as root, and initdb refuses root; no way to run it as the user postgres (runuser: %v; user: %v)", err, uerr))
		}
		openTempDir(t, dir)
		c.as = []string{runuser, "-u", "postgres", "--"}
	}
	c.data = filepath.Join(dir, "data")
	c.log = filepath.Join(dir, "server.log")
	c.port = FreePort(t)
	t.Cleanup(func() {
		if _, err := os.Stat(filepath.Join(c.data, "postmaster.pid")); err == nil {
			c.run(t, "pg_ctl", "-D", c.data, "-m", "immediate", "-w", "stop")
		}
	})
	return c
}

// serverBinaries returns the directory of the newest installed PostgreSQL
// server binaries, or "" when there are none.
func serverBinaries() string {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin") // sorted: 13, 14, 15...
	slices.Reverse(dirs)
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
	argv := slices.Concat(c.as, []string{filepath.Join(c.bin, name)}, args)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.WaitDelay = 5 * time.Second // the server it starts must not hold the output open
	if out, err := cmd.CombinedOutput(); err != nil {
		serverLog, _ := os.ReadFile(c.log)
		t.Fatalf("%s: %v\n%s\nserver log:\n%s", strings.Join(argv, " "), err, out, serverLog)
	}
}

// NewStandby makes a hot standby of c, which must be running, with
// pg_basebackup -R: it streams and replays c's WAL (initdb's defaults allow
// it). It is not started, and it is stopped, if it runs, when the test ends.
func (c *Cluster) NewStandby(t *testing.T) *Cluster {
	t.Helper()
	s := newCluster(t)
	s.run(t, "pg_basebackup", "-D", s.data, "-R", "-X", "stream", "--no-sync",
		"-d", "host=127.0.0.1 port="+strconv.Itoa(c.port)+" user=postgres")
	return s
}

// Promote ends the recovery of a standby: it becomes a primary of its own,
// and no longer follows the server it was copied from.
func (c *Cluster) Promote(t *testing.T) {
	t.Helper()
	c.run(t, "pg_ctl", "-D", c.data, "-w", "-t", "60", "promote")
}
