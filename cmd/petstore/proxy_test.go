package main

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

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
	dir := t.TempDir()
	cert, key := filepath.Join(dir, "petstore.crt"), filepath.Join(dir, "petstore.key")
	writePair(t, ca.valid(t), cert, key)
	proxy, err := nginx.Start(bin, dir, []byte(readFile(t, "../../docs/operating.md")), upstream, cert, key)
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

// TestKeylessRequestsWaitAtNginx sends 40 requests without a key in a row
// through nginx, twice its burst for them: those past the burst wait their
// turn at 10 a second instead of being refused, so every one reaches the
// server and gets its 401, none nginx's 429.
func TestKeylessRequestsWaitAtNginx(t *testing.T) {
	ca := newTestCA(t)
	p := startServer(t, buildServer(t), "nginx-key", nil, "-store", "memory", "-base-path", "/store/v1")
	addr := startNginx(t, ca, p.addr)
	client := ca.client()
	for i := range 40 {
		resp, err := client.Get("https://" + addr + "/store/v1/pets")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("request %d without a key through nginx: %s; want the server's 401", i+1, resp.Status)
		}
	}
}

// TestSlowClientsThroughNginx runs two slow-client attacks through the
// nginx of docs/operating.md and checks that they hold nginx, not the
// server, while another key is served. Twenty creates whose bodies drip
// for a second and a half, against a server that lets the key hold 10
// requests in flight, are all answered 201: nginx passed each on whole,
// where the server alone would have held all twenty at once and refused
// the ones past 10. Eight connections without a key (as many requests
// without a key as nginx lets one address have in progress) ask for the
// docs bundle and never read: the server finishes writing the 8 bundles
// (its access log has their lines) while their clients still read
// nothing, where alone it would wait on them up to -write-timeout.
func TestSlowClientsThroughNginx(t *testing.T) {
	const key, dripper = "victim-key", "dripper-key"
	ca := newTestCA(t)
	p := startServer(t, buildServer(t), "victim:"+key+",dripper:"+dripper, nil,
		"-store", "memory", "-base-path", "/store/v1", "-access-log", "-max-in-flight", "10")
	addr := startNginx(t, ca, p.addr)
	client := ca.client()
	roots := x509.NewCertPool()
	roots.AddCert(ca.cert)
	dial := func(small bool) net.Conn {
		d := net.Dialer{}
		if small { // a client that reads nothing keeps a small window
			d.Control = func(_, _ string, c syscall.RawConn) error {
				return c.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
			}
		}
		c, err := tls.DialWithDialer(&d, "tcp", addr, &tls.Config{RootCAs: roots, NextProtos: []string{"http/1.1"}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}

	const body = `{"name":"drip","categoryId":1}`
	var wg sync.WaitGroup
	statuses := make([]string, 20)
	for i := range statuses {
		c := dial(false)
		wg.Go(func() {
			fmt.Fprintf(c, "POST /store/v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", dripper, len(body))
			for j := range len(body) {
				time.Sleep(50 * time.Millisecond)
				c.Write([]byte{body[j]})
			}
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				statuses[i] = err.Error()
				return
			}
			statuses[i] = resp.Status
		})
	}
	const bundles = 8
	for range bundles {
		fmt.Fprint(dial(true), "GET /store/v1/docs/swagger-ui-bundle.js HTTP/1.1\r\nHost: x\r\nAccept-Encoding: identity\r\n\r\n")
	}
	for i := range 20 { // the victim, meanwhile
		req, _ := http.NewRequest("GET", "https://"+addr+"/store/v1/pets?limit=5", nil)
		if i%2 == 1 {
			req, _ = http.NewRequest("POST", "https://"+addr+"/store/v1/pets", strings.NewReader(`{"name":"victim","categoryId":1}`))
			req.Header.Set("Content-Type", "application/json")
		}
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode >= 300 {
			t.Errorf("the victim's %s %s under attack: %s", req.Method, req.URL.Path, resp.Status)
		}
		time.Sleep(50 * time.Millisecond)
	}
	wg.Wait()
	for i, s := range statuses {
		if s != "201 Created" {
			t.Errorf("dripped create %d through nginx: %s; want 201 Created", i, s)
		}
	}
	// Well within -write-timeout (30 s) of the bundles' requests.
	for deadline := time.Now().Add(10 * time.Second); strings.Count(p.stderr.String(), "swagger-ui-bundle.js operation=\"\" status=200") < bundles; {
		if time.Now().After(deadline) {
			t.Fatalf("the server has not finished the %d docs bundles that nginx asked for:\n%s", bundles, p.stderr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
