// Package nginx runs Debian's nginx with the configuration that
// docs/operating.md gives for cmd/petstore, for the test that serves the
// conformance suite through it and for bench/attacks.
package nginx

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/petstore-go/petstore/internal/testkit/daemon"
)

// Binary returns the path of nginx, or an error that says how to install
// it.
func Binary() (string, error) {
	if bin, err := exec.LookPath("nginx"); err == nil {
		return bin, nil
	}
	if _, err := os.Stat("/usr/sbin/nginx"); err != nil {
		return "", fmt.Errorf("nginx is not installed (%v); apt-get install nginx", err)
	}
	return "/usr/sbin/nginx", nil
}

// config returns the ```nginx block of the markdown doc with the server's
// address, nginx's and the key pair's files put in for the ones it names.
func config(doc []byte, upstream, listen, cert, key string) (string, error) {
	_, block, ok := strings.Cut(string(doc), "\n```nginx\n")
	block, _, ok2 := strings.Cut(block, "\n```\n")
	if !ok || !ok2 {
		return "", errors.New("no ```nginx block")
	}
	for _, r := range [][2]string{
		{"server 127.0.0.1:8080;", "server " + upstream + ";"},
		{"listen 443 ssl http2", "listen " + listen + " ssl http2"},
		{"/etc/nginx/petstore.crt", cert},
		{"/etc/nginx/petstore.key", key},
	} {
		if strings.Count(block, r[0]) != 1 {
			return "", fmt.Errorf("the nginx block does not say %q once:\n%s", r[0], block)
		}
		block = strings.Replace(block, r[0], r[1], 1)
	}
	return block, nil
}

// A Proxy is a running nginx.
type Proxy struct {
	// Addr is the address nginx listens on.
	Addr string
	*daemon.Process
}

// Start runs nginx in the foreground, with a worker for each CPU (as
// Debian's nginx.conf has it) and its files in dir, on a free port of
// 127.0.0.1, with the ```nginx block of the markdown doc in its http block,
// in front of the server at upstream, serving the certificate and key in
// those files. It returns once nginx accepts connections.
func Start(bin, dir string, doc []byte, upstream, cert, key string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	listen := ln.Addr().String()
	ln.Close()
	conf, err := config(doc, upstream, listen, cert, key)
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(dir, 0o755); err != nil { // for the worker, which may run as another user
		return nil, err
	}
	user := ""
	if os.Geteuid() == 0 {
		user = "user root;" // nginx's default user may not read the caller's files
	}
	main := fmt.Sprintf(`daemon off;
%s
worker_processes auto;
pid %[2]s/nginx.pid;
error_log stderr;
events { worker_connections 4096; }
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
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "petstore.conf"), []byte(conf), 0o644); err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "-p", dir, "-e", "stderr", "-c", filepath.Join(dir, "nginx.conf"))
	p, err := daemon.Start(cmd, filepath.Join(dir, "out.log"), listen, 20*time.Second)
	if err != nil {
		return nil, err
	}
	return &Proxy{Addr: listen, Process: p}, nil
}
