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
	"syscall"
	"time"
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
	Addr   string
	dir    string
	cmd    *exec.Cmd
	exited chan error
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
error_log %[2]s/error.log;
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
	// A file, not a pipe: the workers would hold a pipe open past their master.
	out, err := os.Create(filepath.Join(dir, "out.log"))
	if err != nil {
		return nil, err
	}
	defer out.Close()
	p := &Proxy{Addr: listen, dir: dir, exited: make(chan error, 1)}
	p.cmd = exec.Command(bin, "-p", dir, "-e", filepath.Join(dir, "error.log"), "-c", filepath.Join(dir, "nginx.conf"))
	p.cmd.Stdout, p.cmd.Stderr = out, out
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { p.exited <- p.cmd.Wait() }()
	for deadline := time.Now().Add(20 * time.Second); ; {
		select {
		case err := <-p.exited:
			return nil, fmt.Errorf("nginx exited: %v\n%s", err, p.Logs())
		default:
		}
		if c, err := net.DialTimeout("tcp", listen, time.Second); err == nil {
			c.Close()
			return p, nil
		}
		if time.Now().After(deadline) {
			p.Stop()
			return nil, fmt.Errorf("nginx does not listen on %s after 20s:\n%s", listen, p.Logs())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Pid returns the process id of nginx's master.
func (p *Proxy) Pid() int { return p.cmd.Process.Pid }

// Logs returns what nginx wrote to its output and its error log.
func (p *Proxy) Logs() string {
	a, _ := os.ReadFile(filepath.Join(p.dir, "out.log"))
	b, _ := os.ReadFile(filepath.Join(p.dir, "error.log"))
	return string(a) + string(b)
}

// Stop shuts nginx down, its workers with it, and waits for it.
func (p *Proxy) Stop() {
	p.cmd.Process.Signal(syscall.SIGTERM) // nginx's fast shutdown
	select {
	case <-p.exited:
	case <-time.After(10 * time.Second):
		p.cmd.Process.Kill()
		<-p.exited
	}
}
