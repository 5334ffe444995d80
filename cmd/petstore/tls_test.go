package main

import (
	"crypto/tls"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/petstore-go/petstore/petstoretest"
)

// TestServerTLSConformance runs the HTTP conformance suite against the
// server process serving HTTPS, so over HTTP/2, with the key pair named in
// the environment, through a client that trusts only the test's CA.
func TestServerTLSConformance(t *testing.T) {
	const key = "tls-conformance-key"
	ca := newTestCA(t)
	certFile, keyFile := pairFiles(t, ca.valid(t))
	p := startServer(t, buildServer(t), key, []string{tlsCertVar + "=" + certFile, tlsKeyVar + "=" + keyFile})
	if !strings.HasPrefix(p.baseURL, "https://") {
		t.Fatalf("the server prints %s; want an https:// URL", p.baseURL)
	}
	petstoretest.TestServer(t, petstoretest.Endpoint{BaseURL: p.baseURL, APIKey: key, Client: ca.client()})
	log := p.stderr.String()
	if strings.Contains(log, "plain HTTP") {
		t.Errorf("serving HTTPS, the log warns of plain HTTP:\n%s", log)
	}
	if !strings.Contains(log, "serving HTTPS") {
		t.Errorf("the log does not say that the server serves HTTPS:\n%s", log)
	}
}

// TestServerTLSVersions checks what the server process negotiates: HTTP/2
// with a client that offers it and HTTP/1.1 with one that does not, TLS 1.2
// at the least by default, and TLS 1.3 at the least with -tls-min-version
// 1.3.
func TestServerTLSVersions(t *testing.T) {
	const key = "tls-versions-key"
	bin := buildServer(t)
	ca := newTestCA(t)
	certFile, keyFile := pairFiles(t, ca.valid(t))
	servers := map[string]*serverProcess{
		"1.2": startServer(t, bin, key, nil, "-tls-cert", certFile, "-tls-key", keyFile),
		"1.3": startServer(t, bin, key, nil, "-tls-cert", certFile, "-tls-key", keyFile, "-tls-min-version", "1.3"),
	}

	tests := []struct {
		name       string
		minVersion string // the server's -tls-min-version
		clientMax  uint16 // the highest version the client offers; 0: TLS 1.3
		noHTTP2    bool   // the client offers HTTP/1.1 only
		wantErr    bool   // the handshake fails
		wantTLS    uint16
		wantProto  int // major HTTP version
	}{
		{name: "default, HTTP/2", minVersion: "1.2", wantTLS: tls.VersionTLS13, wantProto: 2},
		{name: "default, HTTP/1.1 client", minVersion: "1.2", noHTTP2: true, wantTLS: tls.VersionTLS13, wantProto: 1},
		{name: "default, TLS 1.2 client", minVersion: "1.2", clientMax: tls.VersionTLS12, wantTLS: tls.VersionTLS12, wantProto: 2},
		{name: "default, TLS 1.1 client", minVersion: "1.2", clientMax: tls.VersionTLS11, wantErr: true},
		{name: "1.3, TLS 1.3 client", minVersion: "1.3", wantTLS: tls.VersionTLS13, wantProto: 2},
		{name: "1.3, TLS 1.2 client", minVersion: "1.3", clientMax: tls.VersionTLS12, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client := ca.client()
			tr := client.Transport.(*http.Transport)
			tr.TLSClientConfig.MinVersion = tls.VersionTLS10
			tr.TLSClientConfig.MaxVersion = tt.clientMax
			if tt.noHTTP2 {
				tr.ForceAttemptHTTP2 = false
				tr.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
			}
			resp, err := get(client, servers[tt.minVersion], key)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("the request succeeded over %s; want the handshake refused", tls.VersionName(resp.TLS.Version))
				}
				t.Logf("refused as it should be: %v", err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(
				[]string{tls.VersionName(tt.wantTLS), http.StatusText(http.StatusOK)},
				[]string{tls.VersionName(resp.TLS.Version), http.StatusText(resp.StatusCode)}); diff != "" {
				t.Errorf("TLS version and status (-want +got):\n%s", diff)
			}
			if resp.ProtoMajor != tt.wantProto {
				t.Errorf("the response came over %s, want HTTP/%d", resp.Proto, tt.wantProto)
			}
		})
	}
}

// TestServerTLSRotation replaces the key pair of a running server process,
// once by writing new files that it finds at its next check, once with
// SIGHUP and no checks: new connections get the new certificate, a
// connection opened before keeps working, and a bad pair written after is
// refused in the log while the good one goes on serving.
func TestServerTLSRotation(t *testing.T) {
	bin := buildServer(t)
	tests := []struct {
		name     string
		interval string // -tls-reload-interval
		hup      bool   // send SIGHUP after writing the files
	}{
		{name: "files change", interval: "50ms"},
		{name: "SIGHUP", interval: "0", hup: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			const key = "tls-rotation-key"
			ca := newTestCA(t)
			first, second, third := ca.valid(t), ca.valid(t), ca.valid(t)
			certFile, keyFile := pairFiles(t, first)
			p := startServer(t, bin, key, nil, "-tls-cert", certFile, "-tls-key", keyFile, "-tls-reload-interval", tt.interval)

			kept := ca.client() // opens its connection now and keeps it
			if got := servedSerial(t, kept, p, key); got.Cmp(first.serial) != 0 {
				t.Fatalf("the server presents serial %x, want %x", got, first.serial)
			}

			writePair(t, second, certFile, keyFile)
			if tt.hup {
				// Without checks, the new files alone change nothing.
				if got := newConnSerial(t, ca, p, key); got.Cmp(first.serial) != 0 {
					t.Errorf("with -tls-reload-interval 0 and no SIGHUP, a new connection got serial %x, want still %x", got, first.serial)
				}
				if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
					t.Fatal(err)
				}
			}
			waitSerial(t, p, ca, key, second.serial)

			if got := servedSerial(t, kept, p, key); got.Cmp(first.serial) != 0 {
				t.Errorf("the connection opened before the rotation now shows serial %x, want %x: was it dropped?", got, first.serial)
			}
			if !strings.Contains(p.stderr.String(), "TLS key pair reloaded") {
				t.Errorf("the log does not say that the pair was reloaded:\n%s", p.stderr)
			}

			// A bad pair: the new certificate with the old key. Only the log
			// from here on counts: the check may have caught the first
			// rotation half-way, between the certificate and the key.
			before := len(p.stderr.String())
			replaceFile(t, certFile, third.certPEM)
			if tt.hup {
				if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
					t.Fatal(err)
				}
			}
			waitUntil(t, p, "the log says that the mismatched pair is refused", func() bool {
				return strings.Contains(p.stderr.String()[before:], "the new TLS key pair is refused")
			})
			if log := p.stderr.String()[before:]; !strings.Contains(log, keyFile+" does not match the certificate in "+certFile) {
				t.Errorf("the log does not say why the pair was refused:\n%s", log)
			}
			if got := newConnSerial(t, ca, p, key); got.Cmp(second.serial) != 0 {
				t.Errorf("after a bad pair was written, a new connection got serial %x, want still %x", got, second.serial)
			}
			select {
			case <-p.exited:
				t.Fatalf("the process exited (%v); its log:\n%s", p.err, p.stderr)
			default:
			}
		})
	}
}

// TestServerTLSRefuses starts the server process with bad TLS settings: it
// exits with status 2 before serving or printing a key, and says which
// file is at fault and why. Each kind of bad pair, TestNewCertSourceRefuses
// checks, and each bad setting, TestParseConfigTLS.
func TestServerTLSRefuses(t *testing.T) {
	bin := buildServer(t)
	ca := newTestCA(t)
	good, other := ca.valid(t), ca.valid(t)
	goodCert, goodKey := pairFiles(t, good)
	_, otherKey := pairFiles(t, other)
	missing := filepath.Join(t.TempDir(), "missing.pem")

	tests := []struct {
		name string
		env  []string
		args []string
		want string
	}{
		{name: "mismatched, from the environment", env: []string{tlsCertVar + "=" + goodCert, tlsKeyVar + "=" + otherKey},
			want: "TLS key file " + otherKey + " does not match the certificate in " + goodCert + ": tls: private key does not match public key"},
		{name: "the flag wins over the variable", env: []string{tlsCertVar + "=" + goodCert, tlsKeyVar + "=" + goodKey}, args: []string{"-tls-cert", missing},
			want: "TLS certificate file " + missing + " cannot be read: no such file or directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runToExit(t, bin, tt.env, tt.args...)
			if code != 2 {
				t.Errorf("the server exited with %d, want 2", code)
			}
			if !strings.Contains(stderr, "petstore: "+tt.want+"\n") {
				t.Errorf("stderr:\n%s\nwant it to say %q", stderr, tt.want)
			}
			if stdout != "" {
				t.Errorf("the server printed, before refusing to start:\n%s", stdout)
			}
		})
	}
}

// get lists the pets of p with client, reading the whole response.
func get(client *http.Client, p *serverProcess, key string) (*http.Response, error) {
	req, err := http.NewRequest(http.MethodGet, p.baseURL+"/pets", nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	return resp, err
}

// servedSerial lists the pets of p with client and returns the serial
// number of the certificate that the connection presented.
func servedSerial(t *testing.T, client *http.Client, p *serverProcess, key string) *big.Int {
	t.Helper()
	resp, err := get(client, p, key)
	if err != nil {
		t.Fatalf("%v; the server's log:\n%s", err, p.stderr)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s/pets answered %s", p.baseURL, resp.Status)
	}
	return resp.TLS.PeerCertificates[0].SerialNumber
}

// newConnSerial is servedSerial on a new connection, which it closes.
func newConnSerial(t *testing.T, ca *testCA, p *serverProcess, key string) *big.Int {
	t.Helper()
	client := ca.client()
	defer client.CloseIdleConnections()
	return servedSerial(t, client, p, key)
}

// waitSerial makes new connections to p until one presents the
// certificate with serial number want.
func waitSerial(t *testing.T, p *serverProcess, ca *testCA, key string, want *big.Int) {
	t.Helper()
	waitUntil(t, p, fmt.Sprintf("new connections get serial %x", want), func() bool { return newConnSerial(t, ca, p, key).Cmp(want) == 0 })
}
