package main

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/petstore-go/petstore/petstoretest"
)

// nginxConfig returns the nginx configuration that docs/operating.md gives,
// with the server's address, nginx's port and the key pair's files put in
// for the ones it names.
func nginxConfig(t *testing.T, upstream, listen, cert, key string) string {
	t.Helper()
	doc, err := os.ReadFile("../../docs/operating.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(doc), "\n```nginx\n")
	block, _, ok2 := strings.Cut(block, "\n```\n")
	if !ok || !ok2 {
		t.Fatal("docs/operating.md has no ```nginx block")
	}
	for _, r := range [][2]string{
		{"server 127.0.0.1:8080;", "server " + upstream + ";"},
		{"listen 443 ssl http2;", "listen " + listen + " ssl http2;"},
		{"/etc/nginx/petstore.crt", cert},
		{"/etc/nginx/petstore.key", key},
	} {
		if strings.Count(block, r[0]) != 1 {
			t.Fatalf("the nginx block of docs/operating.md does not say %q once:\n%s", r[0], block)
		}
		block = strings.Replace(block, r[0], r[1], 1)
	}
	return block
}

// startNginx runs nginx in the foreground with the block of
// docs/operating.md in front of the server at upstream, on a free port of
// 127.0.0.1, with a certificate of ca. It returns nginx's address. Without
// nginx it skips the test, unless CI is set to true.
func startNginx(t *testing.T, ca *testCA, upstream string) string {
	t.Helper()
	bin, err := exec.LookPath("nginx")
	if err != nil {
		bin = "/usr/sbin/nginx"
	}
	if _, err := os.Stat(bin); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("nginx is not installed (%v); .ci/run installs it (apt-get install nginx)", err)
		}
		t.Skipf("skipping: nginx is not installed (%v); apt-get install nginx runs this test", err)
	}
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil { // for nginx's workers, which may run as another user
		t.Fatal(err)
	}
	cert, key := filepath.Join(dir, "petstore.crt"), filepath.Join(dir, "petstore.key")
	writePair(t, ca.valid(t), cert, key)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	user := ""
	if os.Geteuid() == 0 {
		user = "user root;" // nginx's default user may not read the test's files
	}
	main := fmt.Sprintf(`daemon off;
%s
worker_processes 1;
pid %[2]s/nginx.pid;
error_log %[2]s/error.log;
events { worker_connections 1024; }
http {
    access_log off;
    client_body_temp_path %[2]s/body;
    proxy_temp_path %[2]s/proxy;
    fastcgi_temp_path %[2]s/fastcgi;
    uwsgi_temp_path %[2]s/uwsgi;
    scgi_temp_path %[2]s/scgi;
    include %[2]s/petstore.conf;
}
`, user, dir)
	if err := os.WriteFile(filepath.Join(dir, "nginx.conf"), []byte(main), 0o644); err != nil {
		t.Fatal(err)
	}
	conf := nginxConfig(t, upstream, addr, cert, key)
	if err := os.WriteFile(filepath.Join(dir, "petstore.conf"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-p", dir, "-e", filepath.Join(dir, "error.log"), "-c", filepath.Join(dir, "nginx.conf"))
	// A file, not a pipe: nginx's worker would hold a pipe open past its
	// master.
	out, err := os.Create(filepath.Join(dir, "out.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM) // nginx's fast shutdown, of its workers too
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
	})
	logs := func() string {
		a, _ := os.ReadFile(filepath.Join(dir, "out.log"))
		b, _ := os.ReadFile(filepath.Join(dir, "error.log"))
		return string(a) + string(b)
	}
	for deadline := time.Now().Add(20 * time.Second); ; {
		select {
		case err := <-exited:
			t.Fatalf("nginx exited: %v\n%s", err, logs())
		default:
		}
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			return addr
		}
		if time.Now().After(deadline) {
			t.Fatalf("nginx does not listen on %s after 20s:\n%s", addr, logs())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// nginxRefuses are the clauses of the conformance suite whose requests
// nginx answers itself, with a page of its own, before they reach the
// server: TRACE (405), a NUL in the path and a second Authorization header
// (400).
var nginxRefuses = []string{"method-not-allowed", "get-invalid-id", "auth-missing"}

// TestServerBehindNginx runs the conformance suite against the server
// under the prefix /store/v1, through nginx with the configuration of
// docs/operating.md, over HTTPS and HTTP/2: every clause passes but those
// of nginxRefuses, which fail only with nginx's own HTML page.
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
