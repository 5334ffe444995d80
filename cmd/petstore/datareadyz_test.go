package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestReadyzDataFile checks that /readyz answers 503 when scheduled
// backups stop succeeding for twice their interval, which /metrics counts,
// and when the data file cannot take writes.
func TestReadyzDataFile(t *testing.T) {
	dir := t.TempDir()
	backups := filepath.Join(dir, "backups")
	p := startServerIn(t, dir, buildServer(t), "ready-key", nil,
		"-admin-addr", "127.0.0.1:0", "-backup-dir", backups, "-backup-interval", "200ms", "-backup-keep", "2")
	admin := adminURL(t, p)
	ready := func() (int, string) {
		status, body := adminDo(t, adminRequest{method: http.MethodGet, url: admin + "/readyz"})
		return status, string(body)
	}
	if status, body := ready(); status != http.StatusOK {
		t.Fatalf("/readyz with backups succeeding: %d %s", status, body)
	}
	time.Sleep(time.Second)
	if es, _ := os.ReadDir(backups); len(es) != 2 {
		t.Errorf("the backup directory holds %d files; want the 2 kept", len(es))
	}
	// Backups fail once their directory is a file.
	if err := os.RemoveAll(backups); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(backups, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		status, body := ready()
		if status == http.StatusServiceUnavailable && strings.Contains(body, "scheduled backups are failing") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz with backups failing: %d %s", status, body)
		}
		time.Sleep(100 * time.Millisecond)
	}
	_, metrics := adminDo(t, adminRequest{method: http.MethodGet, url: admin + "/metrics"})
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
		status, body := adminDo(t, adminRequest{method: http.MethodGet, url: admin + "/readyz"})
		if status != tt.status {
			t.Errorf("/readyz with the data file at mode %v: %d %s; want %d", tt.mode, status, body, tt.status)
		}
	}
}
