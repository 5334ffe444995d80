package main

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestSlowClientsThroughNginx runs two slow-client attacks through the
// nginx of docs/operating.md and checks that they hold nginx, not the
// server, while another key is served. Twenty creates whose bodies drip
// for a second and a half, against a server that lets the key hold 10
// requests in flight, are all answered 201: nginx passed each on whole,
// where the server alone would have held all twenty at once and refused
// the ones past 10. Sixteen connections without a key ask for the docs
// bundle and never read: the server finishes writing the 16 bundles (its
// access log has their lines) while their clients still read nothing,
// where alone it would wait on them up to -write-timeout.
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
	for range 16 {
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
	for deadline := time.Now().Add(10 * time.Second); strings.Count(p.stderr.String(), "swagger-ui-bundle.js operation=\"\" status=200") < 16; {
		if time.Now().After(deadline) {
			t.Fatalf("the server has not finished the 16 docs bundles that nginx asked for:\n%s", p.stderr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
