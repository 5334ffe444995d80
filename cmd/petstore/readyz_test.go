package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/internal/testkit/pgtest"
)

// TestReadyzPostgres stops a throwaway PostgreSQL cluster under the server:
// /readyz answers 200, then 503 with a reason (while /healthz answers 200),
// then 200 once it is back. It is skipped without PostgreSQL's binaries.
func TestReadyzPostgres(t *testing.T) {
	bin := buildServer(t) // first, to skip in -short mode before starting the cluster
	cluster := pgtest.NewCluster(t)
	cluster.Start(t)
	p := startServer(t, bin, "readyz-key", nil, "-postgres", cluster.URL(), "-admin-addr", "127.0.0.1:0")
	admin := adminURL(t, p)

	// waitFor polls /readyz until it answers want, and returns the body.
	waitFor := func(when string, want int) probeBody {
		t.Helper()
		var b probeBody
		waitUntil(t, p, fmt.Sprintf("%s: /readyz answers %d", when, want), func() bool {
			var status int
			status, b = readyz(t, admin)
			return status == want
		})
		return b
	}

	if status, body := readyz(t, admin); status != http.StatusOK || body.Status != "ok" {
		t.Fatalf("database up: /readyz answered %d %+v, want 200 ok", status, body)
	}

	cluster.Stop(t)
	down := waitFor("database down", http.StatusServiceUnavailable)
	if down.Status != "unavailable" || !strings.HasPrefix(down.Reason, "the store ") {
		t.Errorf("database down: /readyz body %+v; want status unavailable and a reason about the store", down)
	}
	// Again, now that the pool's connections are gone and new ones are
	// refused.
	for i := range 3 {
		if status, body := readyz(t, admin); status != http.StatusServiceUnavailable || body.Status != "unavailable" {
			t.Errorf("database down, probe %d more: /readyz answered %d %+v, want 503 unavailable", i+1, status, body)
		}
	}
	if a := mustSend(t, apiRequest{method: http.MethodGet, url: admin + "/healthz"}); a.status != http.StatusOK {
		t.Errorf("database down: /healthz answered %v; want 200, as the process runs", a)
	}

	cluster.Start(t)
	if up := waitFor("database back", http.StatusOK); up.Status != "ok" {
		t.Errorf("database back: /readyz body %+v, want status ok", up)
	}
	if !strings.Contains(p.stderr.String(), "petstore: not ready") {
		t.Errorf("the log does not say when the server was not ready:\n%s", p.stderr)
	}
}

// readyz returns what /readyz at the admin URL admin answers.
func readyz(t *testing.T, admin string) (int, probeBody) {
	t.Helper()
	a := mustSend(t, apiRequest{method: http.MethodGet, url: admin + "/readyz"})
	var b probeBody
	if err := json.Unmarshal(a.body, &b); err != nil {
		t.Fatalf("/readyz answered %v, not JSON: %v", a, err)
	}
	return a.status, b
}

// TestReadyzDataFile checks that /readyz answers 503 while the data file
// cannot be written, and 200 again once it can; and when scheduled backups
// stop succeeding for twice their interval, which /metrics counts.
func TestReadyzDataFile(t *testing.T) {
	dir := t.TempDir()
	backups := filepath.Join(dir, "backups")
	p := startServerIn(t, dir, buildServer(t), "ready-key", nil,
		"-admin-addr", "127.0.0.1:0", "-backup-dir", backups, "-backup-interval", "200ms", "-backup-keep", "2", "-backup-ready")
	admin := adminURL(t, p)
	waitUntil(t, p, "/readyz answers 200 with backups succeeding", func() bool {
		status, _ := readyz(t, admin)
		return status == http.StatusOK
	})
	for _, mode := range []os.FileMode{0o400, 0o600} {
		chmod(t, filepath.Join(dir, defaultDataFile), mode)
		if status, b := readyz(t, admin); (status == http.StatusOK) != (mode == 0o600) {
			t.Errorf("/readyz with the data file at mode %v: %d %+v", mode, status, b)
		}
	}
	// Runs go on every 200ms, each with its temporary file: wait until
	// three have succeeded and the oldest were removed, leaving the newest
	// 2, which never happens if removal is broken.
	waitUntil(t, p, "3 backups succeeded and 2 are kept", func() bool {
		metrics := mustSend(t, apiRequest{method: http.MethodGet, url: admin + "/metrics"}).body
		kept, _ := filepath.Glob(filepath.Join(backups, "petstore-*.db")) // the pattern is well-formed
		return metricValue(t, metrics, `petstore_backup_successes_total`) >= 3 && len(kept) == 2
	})
	// Backups fail once others may write their directory.
	chmod(t, backups, 0o777)
	waitUntil(t, p, "/readyz says that backups are failing", func() bool {
		status, b := readyz(t, admin)
		return status == http.StatusServiceUnavailable && strings.Contains(b.Reason, "scheduled backups are failing")
	})
	metrics := mustSend(t, apiRequest{method: http.MethodGet, url: admin + "/metrics"}).body
	for _, want := range []string{"petstore_backup_failures_total", "petstore_sqlite_wal_size_bytes", "petstore_sqlite_checkpoints_blocked_total"} {
		if !strings.Contains(string(metrics), want) {
			t.Errorf("/metrics has no %s", want)
		}
	}
	if !strings.Contains(p.stderr.String(), "scheduled backup failed") {
		t.Errorf("the log does not say that a backup failed:\n%s", p.stderr)
	}
}

// TestBackupFailsCleanly runs the server under a file-size limit that its
// scheduled backups pass midway: each failed run is counted and logged
// with its reason, leaves no file behind, and /readyz stays 200.
func TestBackupFailsCleanly(t *testing.T) {
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		t.Skipf("no prlimit (util-linux) to limit the server's file size: %v", err)
	}
	bin := buildServer(t)
	dir := t.TempDir()
	data := filepath.Join(dir, defaultDataFile)
	exportFile(t, filepath.Join(dir, "seed.jsonl"), 5000)
	mustRun(t, dir, bin, nil, "import", "seed.jsonl")
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
		metrics := mustSend(t, apiRequest{method: http.MethodGet, url: admin + "/metrics"}).body
		return metricValue(t, metrics, `petstore_backup_failures_total`) >= 3
	})
	if a := mustSend(t, apiRequest{method: http.MethodGet, url: admin + "/readyz"}); a.status != http.StatusOK {
		t.Errorf("/readyz with backups failing and without -backup-ready: %v; want 200", a)
	}
	if !strings.Contains(p.stderr.String(), "scheduled backup failed") || !strings.Contains(p.stderr.String(), "writing the copy beside") {
		t.Errorf("the log does not say that a backup failed and why:\n%s", p.stderr)
	}
	// Once the server has stopped, with no run in progress.
	p.stop(t)
	if es, _ := os.ReadDir(backups); len(es) != 0 {
		t.Errorf("failed backups left %v in the backup directory; want none", es)
	}
}

// chmod sets the mode of path.
func chmod(t *testing.T, path string, mode os.FileMode) {
	t.Helper()
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

// TestReplicas runs the server on a primary with a hot standby in
// PETSTORE_POSTGRES_REPLICA_URLS: the log names the replica without its
// password, it serves reads, counted in /metrics with its lag, and /readyz
// reports it; once it stops, /readyz still answers 200 and reads work.
func TestReplicas(t *testing.T) {
	bin := buildServer(t) // first, to skip in -short mode before starting the clusters
	primary := pgtest.NewCluster(t)
	primary.Start(t)
	standby := primary.NewStandby(t)
	standby.Start(t)
	const secret = "replica-secret-word"
	replicaURL := strings.Replace(standby.URL(), "postgres@", "postgres:"+secret+"@", 1)
	const key = "replicas-key"
	p := startServer(t, bin, key, []string{replicaURLsVar + "=" + replicaURL},
		"-postgres", primary.URL(), "-admin-addr", "127.0.0.1:0")
	admin := adminURL(t, p)
	log := p.stderr.String()
	port := parseURL(t, standby.URL()).Port()
	if !strings.Contains(log, "reading pets from a PostgreSQL replica") || !strings.Contains(log, "port="+port) {
		t.Errorf("the start-up log does not name the replica on port %s:\n%s", port, log)
	}
	if strings.Contains(log, secret) {
		t.Errorf("the start-up log shows the replica's password:\n%s", log)
	}

	a := createPet(t, p.baseURL, key, "", petstore.NewPet{Name: "Rex", CategoryID: 1})
	pet, err := a.pet()
	if a.status != http.StatusCreated || err != nil {
		t.Fatalf("POST answered %v", a)
	}
	get := func(when string) {
		t.Helper()
		target := fmt.Sprintf("%s/pets/%d", p.baseURL, pet.ID)
		if a := mustSend(t, apiRequest{method: http.MethodGet, url: target, key: key}); a.status != http.StatusOK {
			t.Fatalf("%s: GET %s answered %v", when, target, a)
		}
	}
	replica := "127.0.0.1:" + port + "/postgres"
	ready := func(when string, serving bool) probeBody {
		t.Helper()
		var b probeBody
		waitUntil(t, p, fmt.Sprintf("%s: /readyz reports the replica %s with serving %v", when, replica, serving), func() bool {
			var status int
			if status, b = readyz(t, admin); status != http.StatusOK {
				t.Fatalf("%s: /readyz answered %d %+v; want 200", when, status, b)
			}
			return len(b.Replicas) == 1 && b.Replicas[0].Serving == serving
		})
		return b
	}
	up := ready("standby up", true)
	if r := up.Replicas[0]; r.Name != replica || r.LagSeconds < 0 || r.LagSeconds > 1 || r.Reason != "" {
		t.Errorf("standby up: /readyz reports the replica as %+v; want %s, serving, with a lag under 1s", r, replica)
	}
	for range 10 {
		get("standby up")
	}
	metrics := mustSend(t, apiRequest{method: http.MethodGet, url: admin + "/metrics"}).body
	if n := metricValue(t, metrics, `petstore_store_reads_total{served_by="replica"}`); n < 10 {
		t.Errorf("the metrics count %v reads served by the replica after 10 GETs; want at least 10", n)
	}
	metricValue(t, metrics, `petstore_replica_lag_seconds{replica="`+replica+`"}`)
	metricValue(t, metrics, `petstore_store_reads_total{served_by="fallback"}`)

	standby.Stop(t)
	down := ready("standby stopped", false)
	if r := down.Replicas[0]; r.Reason == "" || strings.Contains(r.Reason, secret) {
		t.Errorf("standby stopped: /readyz reports the replica as %+v; want a reason, without the password", r)
	}
	for range 10 {
		get("standby stopped")
	}
	metrics = mustSend(t, apiRequest{method: http.MethodGet, url: admin + "/metrics"}).body
	if n := metricValue(t, metrics, `petstore_replica_serving{replica="`+replica+`"}`); n != 0 {
		t.Errorf("standby stopped: petstore_replica_serving is %v; want 0", n)
	}
}

// metricValue returns the value of the sample named, with its labels, in
// the Prometheus text, and fails the test when there is none.
func metricValue(t *testing.T, text []byte, sample string) float64 {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(sample) + ` (\S+)$`).FindSubmatch(text)
	if m == nil {
		t.Fatalf("the metrics have no sample %s:\n%s", sample, text)
	}
	v, err := strconv.ParseFloat(string(m[1]), 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
