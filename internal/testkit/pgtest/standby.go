package pgtest

import (
	"strconv"
	"testing"
)

// NewStandby makes a hot standby of c, which must be running: a copy of its
// data made with pg_basebackup -R, so that it streams c's WAL and replays
// it, on a free port of its own and owned by the same user. It is not
// started; Start starts it, and it is stopped, if it runs, when the test
// ends. The defaults of initdb suit a standby: wal_level replica,
// hot_standby on, and replication connections from 127.0.0.1 trusted.
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
