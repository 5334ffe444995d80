package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/sqlitestore"
)

// TestReadyzDataFile checks that /readyz answers 503 when scheduled
// backups stop succeeding for twice their interval, which /metrics counts,
// and when the data file cannot take writes.
func TestReadyzDataFile(t *testing.T) {
	dir := t.TempDir()
	backups := filepath.Join(dir, "backups")
	p := startServerIn(t, dir, buildServer(t), "ready-key", nil,
		"-admin-addr", "127.0.0.1:0", "-backup-dir", backups, "-backup-interval", "200ms", "-backup-keep", "2", "-backup-ready")
	admin := adminURL(t, p)
	ready := func() (int, string) {
		status, body := adminDo(t, apiRequest{method: http.MethodGet, url: admin + "/readyz"})
		return status, string(body)
	}
	waitUntil(t, p, "/readyz answers 200 with backups succeeding", func() bool {
		status, _ := ready()
		return status == http.StatusOK
	})
	// Runs go on every 200ms, each with its temporary file: wait until
	// three have succeeded and the oldest were removed, leaving the newest
	// 2, which never happens if removal is broken.
	waitUntil(t, p, "3 backups succeeded and 2 are kept", func() bool {
		_, metrics := adminDo(t, apiRequest{method: http.MethodGet, url: admin + "/metrics"})
		if metricValue(t, metrics, `petstore_backup_successes_total`+scopeLabels) < 3 {
			return false
		}
		es, err := os.ReadDir(backups)
		if err != nil {
			t.Fatal(err)
		}
		kept := 0
		for _, e := range es {
			if strings.HasPrefix(e.Name(), backupPrefix) && strings.HasSuffix(e.Name(), backupSuffix) {
				kept++
			}
		}
		return kept == 2
	})
	// Backups fail once others may write their directory.
	chmod(t, backups, 0o777)
	waitUntil(t, p, "/readyz says that backups are failing", func() bool {
		status, body := ready()
		return status == http.StatusServiceUnavailable && strings.Contains(body, "scheduled backups are failing")
	})
	_, metrics := adminDo(t, apiRequest{method: http.MethodGet, url: admin + "/metrics"})
	for _, want := range []string{"petstore_backup_failures_total", "petstore_sqlite_wal_size_bytes", "petstore_sqlite_checkpoints_blocked_total"} {
		if !strings.Contains(string(metrics), want) {
			t.Errorf("/metrics has no %s", want)
		}
	}
	if !strings.Contains(p.stderr.String(), "scheduled backup failed") {
		t.Errorf("the log does not say that a backup failed:\n%s", p.stderr)
	}
}

// TestReadyzReadOnlyFile checks that /readyz answers 503 while the data
// file cannot be written, and 200 again once it can.
func TestReadyzReadOnlyFile(t *testing.T) {
	dir := t.TempDir()
	p := startServerIn(t, dir, buildServer(t), "ready-key", nil, "-admin-addr", "127.0.0.1:0")
	admin := adminURL(t, p)
	data := filepath.Join(dir, defaultDataFile)
	for _, tt := range []struct {
		mode   os.FileMode
		status int
	}{{0o400, http.StatusServiceUnavailable}, {0o600, http.StatusOK}} {
		if err := os.Chmod(data, tt.mode); err != nil {
			t.Fatal(err)
		}
		status, body := adminDo(t, apiRequest{method: http.MethodGet, url: admin + "/readyz"})
		if status != tt.status {
			t.Errorf("/readyz with the data file at mode %v: %d %s; want %d", tt.mode, status, body, tt.status)
		}
	}
}

// TestBackupFailsCleanly runs the server under a file-size limit that its
// scheduled backups pass midway, as on a full backup disk: each failed run
// is counted in /metrics and logged with its reason, leaves no file in the
// backup directory, and /readyz goes on answering 200, since the server
// still serves.
func TestBackupFailsCleanly(t *testing.T) {
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		t.Skipf("no prlimit (util-linux) to limit the server's file size: %v", err)
	}
	bin := buildServer(t)
	dir := t.TempDir()
	data := filepath.Join(dir, defaultDataFile)
	s, err := sqlitestore.Open(data)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 40 {
				if _, _, err := s.Add(context.Background(), petstore.NewPet{Name: strings.Repeat("𝄞", petstore.MaxNameLength), CategoryID: 1}, petstore.AddOptions{}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(data)
	if err != nil {
		t.Fatal(err)
	}
	// The server only reads its data file here; a backup of it passes the
	// limit midway.
	limit := fi.Size() / 2
	wrapper := filepath.Join(t.TempDir(), "petstore")
	script := fmt.Sprintf("#!/bin/sh\nexec %s --fsize=%d -- %s \"$@\"\n", prlimit, limit, bin)
	if err := os.WriteFile(wrapper, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	backups := filepath.Join(dir, "backups")
	p := startServerIn(t, dir, wrapper, "ready-key", nil,
		"-admin-addr", "127.0.0.1:0", "-backup-dir", backups, "-backup-interval", "50ms")
	admin := adminURL(t, p)
	waitUntil(t, p, "3 failed backups are counted", func() bool {
		_, metrics := adminDo(t, apiRequest{method: http.MethodGet, url: admin + "/metrics"})
		return metricValue(t, metrics, `petstore_backup_failures_total`+scopeLabels) >= 3
	})
	if status, body := adminDo(t, apiRequest{method: http.MethodGet, url: admin + "/readyz"}); status != http.StatusOK {
		t.Errorf("/readyz with backups failing and without -backup-ready: %d %s; want 200", status, body)
	}
	if !strings.Contains(p.stderr.String(), "scheduled backup failed") || !strings.Contains(p.stderr.String(), "writing the copy beside") {
		t.Errorf("the log does not say that a backup failed and why:\n%s", p.stderr)
	}
	// Once the server has stopped, with no run in progress.
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(t, 10*time.Second); code != 0 {
		t.Fatalf("the server exited with %d after SIGTERM; its log:\n%s", code, p.stderr)
	}
	if es, _ := os.ReadDir(backups); len(es) != 0 {
		t.Errorf("failed backups left %v in the backup directory; want none", es)
	}
}

// TestBackupDirChecked checks that scheduled backups refuse, at start and
// at each run, a directory that another user could write through.
func TestBackupDirChecked(t *testing.T) {
	logger := slog.New(slog.DiscardHandler)
	for _, tt := range []struct {
		name  string
		setup func(t *testing.T, dir string) string // returns the -backup-dir
		want  string                                // in the error; "" for none
	}{
		{"owner-only", func(t *testing.T, dir string) string { return dir }, ""},
		{"made when missing", func(t *testing.T, dir string) string { return filepath.Join(dir, "new") }, ""},
		{"symbolic link", func(t *testing.T, dir string) string {
			link := filepath.Join(t.TempDir(), "link")
			if err := os.Symlink(dir, link); err != nil {
				t.Fatal(err)
			}
			return link
		}, "symbolic link"},
		{"group-writable", func(t *testing.T, dir string) string { chmod(t, dir, 0o770); return dir }, "chmod 700"},
		{"world-writable", func(t *testing.T, dir string) string { chmod(t, dir, 0o777); return dir }, "chmod 700"},
		{"another owner", func(t *testing.T, dir string) string {
			if err := os.Chown(dir, os.Geteuid()+1, -1); err != nil {
				t.Skipf("cannot give the directory to another user: %v", err)
			}
			return dir
		}, "owned by uid"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := tt.setup(t, t.TempDir())
			_, err := newBackupScheduler(filepath.Join(t.TempDir(), "pets.db"), backupFlags{dir: dir, interval: time.Hour, keep: 1}, logger)
			if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
				t.Errorf("newBackupScheduler with %s: %v; want an error saying %q", tt.name, err, tt.want)
			}
		})
	}
	// A directory that becomes group-writable after start fails the run.
	dir := t.TempDir()
	src := filepath.Join(t.TempDir(), "pets.db")
	s, err := sqlitestore.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	b, err := newBackupScheduler(src, backupFlags{dir: dir, interval: time.Hour, keep: 1}, slog.New(slog.NewTextHandler(&log, nil)))
	if err != nil {
		t.Fatal(err)
	}
	chmod(t, dir, 0o770)
	b.once(context.Background())
	if b.failures.Load() != 1 || !strings.Contains(log.String(), "chmod 700") {
		t.Errorf("a run into a group-writable directory: %d failures, log %q; want 1 failure saying chmod 700", b.failures.Load(), log.String())
	}
	if es, _ := os.ReadDir(dir); len(es) != 0 {
		t.Errorf("the refused run wrote %v", es)
	}
}

// chmod sets the mode of path.
func chmod(t *testing.T, path string, mode os.FileMode) {
	t.Helper()
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

// scopeLabels are the labels of the server's own metrics in /metrics.
const scopeLabels = `{otel_scope_name="github.com/petstore-go/petstore/cmd/petstore",otel_scope_schema_url="",otel_scope_version=""}`
