package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/petstore-go/petstore/internal/testkit/pgtest"
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
	cluster := pgtest.NewCluster(t)
	cluster.Start(t)
	bin := buildServer(t)
	p := startServer(t, bin, "readyz-key", nil, "-postgres", cluster.URL(), "-admin-addr", "127.0.0.1:0")
	admin := adminURL(t, p)

	// probe returns what /readyz answers.
	probe := func() (int, probeBody) {
		status, body := adminDo(t, apiRequest{method: http.MethodGet, url: admin + "/readyz"})
		var b probeBody
		if err := json.Unmarshal(body, &b); err != nil {
			t.Fatalf("/readyz answered %d with %q, not JSON: %v", status, body, err)
		}
		return status, b
	}
	// waitFor polls /readyz until it answers want, and returns the body.
	waitFor := func(when string, want int) probeBody {
		t.Helper()
		var b probeBody
		waitUntil(t, p, fmt.Sprintf("%s: /readyz answers %d", when, want), func() bool {
			var status int
			status, b = probe()
			return status == want
		})
		return b
	}

	if status, body := probe(); status != http.StatusOK || body.Status != "ok" {
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
		if status, body := probe(); status != http.StatusServiceUnavailable || body.Status != "unavailable" {
			t.Errorf("database down, probe %d more: /readyz answered %d %+v, want 503 unavailable", i+1, status, body)
		}
	}
	if status, body := adminDo(t, apiRequest{method: http.MethodGet, url: admin + "/healthz"}); status != http.StatusOK {
		t.Errorf("database down: /healthz answered %d %s; want 200, as the process runs", status, body)
	}

	cluster.Start(t)
	if up := waitFor("database back", http.StatusOK); up.Status != "ok" {
		t.Errorf("database back: /readyz body %+v, want status ok", up)
	}
	if !strings.Contains(p.stderr.String(), "petstore: not ready") {
		t.Errorf("the log does not say when the server was not ready:\n%s", p.stderr)
	}
}
