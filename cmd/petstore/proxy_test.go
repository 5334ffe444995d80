package main

import (
	"crypto/tls"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/petstore-go/petstore/internal/testkit/nginx"
	"github.com/petstore-go/petstore/petstoretest"
)

// startNginx runs nginx with the block of docs/operating.md in front of the
// server at upstream, on a free port of 127.0.0.1, with a certificate of
// ca, and returns its address. Without nginx it skips the test, unless CI
// is set to true.
func startNginx(t *testing.T, ca *testCA, upstream string) string {
	t.Helper()
	bin, err := nginx.Binary()
	if err != nil && os.Getenv("CI") == "true" {
		t.Fatalf("%v; .ci/run installs it", err)
	} else if err != nil {
		t.Skipf("skipping: %v", err)
	}
	doc, err := os.ReadFile("../../docs/operating.md")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cert, key := filepath.Join(dir, "petstore.crt"), filepath.Join(dir, "petstore.key")
	writePair(t, ca.valid(t), cert, key)
	proxy, err := nginx.Start(bin, dir, doc, upstream, cert, key)
	if err != nil {
		t.Fatalf("nginx with docs/operating.md's block: %v", err)
	}
	t.Cleanup(proxy.Stop)
	return proxy.Addr
}

// nginxRefuses are the clauses whose requests nginx answers itself: TRACE
// (405), a NUL in the path and a second Authorization header (400).
var nginxRefuses = []string{"method-not-allowed", "get-invalid-id", "auth-missing"}

// TestServerBehindNginx runs the conformance suite under /store/v1 through
// nginx configured as docs/operating.md says, over HTTPS and HTTP/2: every
// clause passes but those of nginxRefuses, failed by nginx's HTML page.
func TestServerBehindNginx(t *testing.T) {
	const key = "nginx-key"
	ca := newTestCA(t)
	p := startServer(t, buildServer(t), key, nil, "-store", "memory", "-base-path", "/store/v1")
	addr := startNginx(t, ca, p.addr)
	client := ca.client()
	err := petstoretest.CheckServer(petstoretest.Endpoint{BaseURL: "https://" + addr + "/store/v1", APIKey: key, Client: client})
	var failed []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		failed = j.Unwrap()
	}
	for _, err := range failed {
		msg := err.Error()
		refused := slices.ContainsFunc(nginxRefuses, func(c string) bool { return strings.Contains(msg, `clause "`+c+`" failed`) })
		if !refused || !strings.Contains(msg, `[]string{"text/html"}`) {
			t.Error(err)
		}
	}

	resp, err := client.Get("https://" + addr + "/store/v1/pets")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || resp.Proto != "HTTP/2.0" || resp.TLS == nil || resp.TLS.Version < tls.VersionTLS12 {
		t.Errorf("a request without a key through nginx: %s over %s; want 401 over HTTP/2 with TLS", resp.Status, resp.Proto)
	}
}
