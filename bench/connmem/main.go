// Command connmem measures what cmd/petstore holds for a connection: it
// starts the server built at -bin on a free loopback port with a
// self-signed certificate, reads its resident memory (VmRSS), opens idle
// HTTP/1.1 connections (each after one answered request) and then HTTP/2
// connections with every stream open (a create whose body never ends), and
// prints the growth per connection. Run it once for each kind (-h2 0, then
// -idle 0): memory that the idle connections freed is reused by the
// HTTP/2 ones, not returned to the system. It runs for some seconds, well within
// the server's -read-timeout, and stops the server.
//
// Usage:
//
//	go build -o /tmp/petstore ./cmd/petstore
//	go run ./bench/connmem -bin /tmp/petstore -h2 0
//	go run ./bench/connmem -bin /tmp/petstore -idle 0
package main

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"flag"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

func main() {
	bin := flag.String("bin", "", "the cmd/petstore executable")
	idle := flag.Int("idle", 2000, "idle HTTP/1.1 connections")
	h2 := flag.Int("h2", 20, "HTTP/2 connections, each with its stream limit of requests open")
	streams := flag.Int("streams", 100, "the server's streams per HTTP/2 connection")
	flag.Parse()
	if *bin == "" {
		log.Fatal("-bin is required")
	}
	dir, err := os.MkdirTemp("", "connmem-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	cert, key := selfSigned(dir)
	const apiKey = "connmem-key"
	cmd := exec.Command(*bin, "-addr", "127.0.0.1:0", "-store", "memory", "-tls-cert", cert, "-tls-key", key,
		"-read-limit", "off", "-create-limit", "off", "-max-in-flight", "0")
	cmd.Env = append(os.Environ(), "PETSTORE_API_KEYS="+apiKey)
	out, _ := cmd.StdoutPipe()
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		log.Fatal(err)
	}
	defer cmd.Process.Kill()
	var base string
	for sc := bufio.NewScanner(out); sc.Scan(); {
		if u, ok := strings.CutPrefix(sc.Text(), "serving "); ok {
			base = strings.TrimSuffix(u, "/pets")
			break
		}
	}
	go io.Copy(io.Discard, out)
	addr := strings.Split(strings.TrimPrefix(base, "https://"), "/")[0]
	tlsConfig := &tls.Config{InsecureSkipVerify: true} // the certificate made above

	settle := func() int {
		time.Sleep(2 * time.Second)
		return rss(cmd.Process.Pid)
	}
	before := settle()

	// Idle HTTP/1.1 connections, each after one request answered.
	var conns []net.Conn
	for range *idle {
		c, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"http/1.1"}})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Fprintf(c, "GET %s/pets?limit=1 HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\n\r\n", strings.TrimPrefix(base, "https://"+addr), addr, apiKey)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			log.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		conns = append(conns, c)
	}
	afterIdle := settle()
	if *idle > 0 {
		fmt.Printf("idle HTTP/1.1 over TLS: %d connections, RSS %d -> %d KiB: %.1f KiB a connection\n",
			*idle, before, afterIdle, float64(afterIdle-before)/float64(*idle))
	}
	for _, c := range conns {
		c.Close()
	}
	afterClose := settle()

	// HTTP/2 connections at their stream limit: each stream a create whose
	// body has sent a byte and then stops.
	var pipes []*io.PipeWriter
	for range *h2 {
		tr := &http.Transport{TLSClientConfig: tlsConfig.Clone(), ForceAttemptHTTP2: true}
		tr.HTTP2 = &http.HTTP2Config{StrictMaxConcurrentRequests: true}
		client := &http.Client{Transport: tr}
		for range *streams {
			pr, pw := io.Pipe()
			req, _ := http.NewRequest("POST", base+"/pets", pr)
			req.Header.Set("Authorization", "Bearer "+apiKey)
			req.Header.Set("Content-Type", "application/json")
			go client.Do(req)
			go pw.Write([]byte("{"))
			pipes = append(pipes, pw)
		}
	}
	afterH2 := settle()
	if *h2 == 0 {
		return
	}
	fmt.Printf("HTTP/2 at %d streams: %d connections, RSS %d -> %d KiB: %.1f KiB a connection\n",
		*streams, *h2, afterClose, afterH2, float64(afterH2-afterClose)/float64(*h2))
	for _, pw := range pipes {
		pw.Close()
	}
}

// rss returns the resident memory of the process pid, in KiB.
func rss(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		log.Fatal(err)
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, _ := strconv.Atoi(strings.Fields(v)[0])
			return n
		}
	}
	log.Fatal("no VmRSS")
	return 0
}

// selfSigned writes a certificate for 127.0.0.1 and its key into dir.
func selfSigned(dir string) (cert, key string) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		log.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		log.Fatal(err)
	}
	kd, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		log.Fatal(err)
	}
	cert, key = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kd}), 0o600)
	return cert, key
}
