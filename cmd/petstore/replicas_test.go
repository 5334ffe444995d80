package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/petstore-go/petstore/internal/testkit/pgtest"
)

// TestReplicas runs the server on a throwaway primary with a hot standby
// named in PETSTORE_POSTGRES_REPLICA_URLS: the start-up log names the
// replica without its password, reads are served by it and counted in the
// metrics with its lag, and /readyz reports it; once it stops, /readyz
// still answers 200, saying that it does not serve, and reads still work.
func TestReplicas(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping a test that builds and runs the server and two PostgreSQL servers as processes in -short mode")
	}
	primary := pgtest.NewCluster(t)
	primary.Start(t)
	standby := primary.NewStandby(t)
	standby.Start(t)
	const secret = "replica-secret-word"
	replicaURL := strings.Replace(standby.URL(), "postgres@", "postgres:"+secret+"@", 1)
	const key = "replicas-key"
	p := startServer(t, buildServer(t), key, []string{replicaURLsVar + "=" + replicaURL},
		"-postgres", primary.URL(), "-admin-addr", "127.0.0.1:0")
	admin := adminURL(t, p)
	log := p.stderr.String()
	port := strconv.Itoa(standbyPort(t, standby.URL()))
	if !strings.Contains(log, "reading pets from a PostgreSQL replica") || !strings.Contains(log, "port="+port) {
		t.Errorf("the start-up log does not name the replica on port %s:\n%s", port, log)
	}
	if strings.Contains(log, secret) {
		t.Errorf("the start-up log shows the replica's password:\n%s", log)
	}

	status, body := adminDo(t, apiRequest{method: http.MethodPost, url: p.baseURL + "/pets", key: key, body: `{"name":"Rex","categoryId":1}`})
	if status != http.StatusCreated {
		t.Fatalf("POST answered %d: %s", status, body)
	}
	var pet struct{ ID int64 }
	if err := json.Unmarshal(body, &pet); err != nil {
		t.Fatal(err)
	}
	get := func(when string) {
		t.Helper()
		target := fmt.Sprintf("%s/pets/%d", p.baseURL, pet.ID)
		if status, body := adminDo(t, apiRequest{method: http.MethodGet, url: target, key: key}); status != http.StatusOK {
			t.Fatalf("%s: GET %s answered %d: %s", when, target, status, body)
		}
	}
	replica := "127.0.0.1:" + port + "/postgres"
	ready := func(when string, serving bool) probeBody {
		t.Helper()
		var b probeBody
		for range 100 {
			b = probeBody{}
			status, body := adminDo(t, apiRequest{method: http.MethodGet, url: admin + "/readyz"})
			if err := json.Unmarshal(body, &b); err != nil || status != http.StatusOK {
				t.Fatalf("%s: /readyz answered %d %s; want 200 (%v)", when, status, body, err)
			}
			if len(b.Replicas) == 1 && b.Replicas[0].Serving == serving {
				return b
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Fatalf("%s: /readyz answered %+v for 10s; want the replica %s with serving %v", when, b, replica, serving)
		return b
	}
	up := ready("standby up", true)
	if r := up.Replicas[0]; r.Name != replica || r.LagSeconds < 0 || r.LagSeconds > 1 || r.Reason != "" {
		t.Errorf("standby up: /readyz reports the replica as %+v; want %s, serving, with a lag under 1s", r, replica)
	}
	for range 10 {
		get("standby up")
	}
	_, metrics := adminDo(t, apiRequest{method: http.MethodGet, url: admin + "/metrics"})
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
	_, metrics = adminDo(t, apiRequest{method: http.MethodGet, url: admin + "/metrics"})
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

// standbyPort returns the port of a cluster's URL.
func standbyPort(t *testing.T, url string) int {
	t.Helper()
	m := regexp.MustCompile(`:(\d+)/`).FindStringSubmatch(url)
	if m == nil {
		t.Fatalf("no port in %s", url)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}
