package sqlitestore_test

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/petstore-go/petstore/internal/testkit/syncbuf"
	"github.com/petstore-go/petstore/sqlitestore"
)

// TestScheduleBackupsRefuses checks that ScheduleBackups refuses a
// directory in which another user could replace a backup, and settings
// that cannot work, and makes a missing directory.
func TestScheduleBackupsRefuses(t *testing.T) {
	s := open(t, newPath(t))
	for _, tt := range []struct {
		name     string
		setup    func(t *testing.T, dir string) string // returns the directory
		interval time.Duration
		keep     int
		want     string // in the error; "" for none
	}{
		{"owner-only", func(t *testing.T, dir string) string { return dir }, time.Hour, 1, ""},
		{"made when missing", func(t *testing.T, dir string) string { return filepath.Join(dir, "new") }, time.Hour, 1, ""},
		{"symbolic link", func(t *testing.T, dir string) string {
			link := filepath.Join(t.TempDir(), "link")
			if err := os.Symlink(dir, link); err != nil {
				t.Fatal(err)
			}
			return link
		}, time.Hour, 1, "symbolic link"},
		{"group-writable", func(t *testing.T, dir string) string { chmod(t, dir, 0o770); return dir }, time.Hour, 1, "chmod 700"},
		{"world-writable", func(t *testing.T, dir string) string { chmod(t, dir, 0o777); return dir }, time.Hour, 1, "chmod 700"},
		{"another owner", func(t *testing.T, dir string) string {
			if err := os.Chown(dir, os.Geteuid()+1, -1); err != nil {
				t.Skipf("cannot give the directory to another user: %v", err)
			}
			return dir
		}, time.Hour, 1, "owned by uid"},
		{"no interval", func(t *testing.T, dir string) string { return dir }, 0, 1, "interval 0s: want more than 0"},
		{"none kept", func(t *testing.T, dir string) string { return dir }, time.Hour, 0, "keep 0: want 1 or more"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b, err := s.ScheduleBackups(tt.setup(t, t.TempDir()), tt.interval, tt.keep)
			if err == nil {
				b.Stop()
			}
			if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
				t.Errorf("ScheduleBackups with %s: %v; want an error saying %q", tt.name, err, tt.want)
			}
		})
	}
}

// TestScheduleBackups checks scheduled backups from the first to Stop: each
// is a data file that holds the pets, only the newest are kept, and a
// directory that becomes group-writable fails the next run before it
// writes anything, counted and logged.
func TestScheduleBackups(t *testing.T) {
	var log syncbuf.Buffer
	s := open(t, newPath(t), sqlitestore.WithLogger(slog.New(slog.NewTextHandler(&log, nil))))
	for _, name := range []string{"a", "b", "c"} {
		add(t, s, name, "")
	}
	dir := filepath.Join(t.TempDir(), "backups")
	b, err := s.ScheduleBackups(dir, 10*time.Millisecond, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Stop()
	kept := func() []string {
		names, _ := filepath.Glob(filepath.Join(dir, "petstore-*.db")) // the pattern is well-formed
		return names
	}
	waitFor(t, "3 backups succeeded and 2 are kept", func() bool { return b.Stats().Successes >= 3 && len(kept()) == 2 })
	if st := b.Stats(); st.Failures != 0 || time.Since(st.LastSuccess) > time.Minute {
		t.Errorf("Stats() = %+v; want no failure and a recent success", st)
	}
	chmod(t, dir, 0o770)
	// Runs are one at a time: after the first failure, every run is refused.
	waitFor(t, "a run into a group-writable directory fails", func() bool { return b.Stats().Failures >= 1 })
	before := kept()
	waitFor(t, "two more runs fail", func() bool { return b.Stats().Failures >= 3 })
	b.Stop()
	if !strings.Contains(log.String(), "scheduled backup failed") || !strings.Contains(log.String(), "chmod 700") {
		t.Errorf("the log does not say that a backup failed and why:\n%s", log.String())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != len(before) {
		t.Errorf("the refused runs left %v in the directory; want only the %d backups before", entries, len(before))
	}
	newest := before[len(before)-1]
	if got := len(all(t, open(t, newest))); got != 3 {
		t.Errorf("the backup %s holds %d pets, want 3", newest, got)
	}
}

// chmod sets the mode of name, failing the test when it cannot.
func chmod(t *testing.T, name string, mode os.FileMode) {
	t.Helper()
	if err := os.Chmod(name, mode); err != nil {
		t.Fatal(err)
	}
}
