package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io/fs"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestServerTLSVersions: HTTP/2 when the client offers it, else HTTP/1.1;
// TLS 1.2 at the least by default, 1.3 with -tls-min-version 1.3.
func TestServerTLSVersions(t *testing.T) {
	const key = "tls-versions-key"
	bin, ca := buildServer(t), newTestCA(t)
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
		wantProto  string
	}{
		{name: "default, HTTP/2", minVersion: "1.2", wantTLS: tls.VersionTLS13, wantProto: "HTTP/2.0"},
		{name: "default, HTTP/1.1 client", minVersion: "1.2", noHTTP2: true, wantTLS: tls.VersionTLS13, wantProto: "HTTP/1.1"},
		{name: "default, TLS 1.2 client", minVersion: "1.2", clientMax: tls.VersionTLS12, wantTLS: tls.VersionTLS12, wantProto: "HTTP/2.0"},
		{name: "default, TLS 1.1 client", minVersion: "1.2", clientMax: tls.VersionTLS11, wantErr: true},
		{name: "1.3, TLS 1.3 client", minVersion: "1.3", wantTLS: tls.VersionTLS13, wantProto: "HTTP/2.0"},
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
			list := apiRequest{method: http.MethodGet, url: servers[tt.minVersion].baseURL + "/pets", key: key}
			a, err := send(context.Background(), client, list)
			switch {
			case tt.wantErr && err == nil:
				t.Fatalf("the request succeeded over %s; want the handshake refused", tls.VersionName(a.tls.Version))
			case tt.wantErr:
				t.Logf("refused as it should be: %v", err)
				return
			case err != nil:
				t.Fatal(err)
			}
			want := []any{tls.VersionName(tt.wantTLS), http.StatusOK, tt.wantProto}
			if diff := cmp.Diff(want, []any{tls.VersionName(a.tls.Version), a.status, a.proto}); diff != "" {
				t.Errorf("TLS version, status and protocol (-want +got):\n%s", diff)
			}
		})
	}
}

// TestServerTLSRotation replaces the key pair of a running server, found
// at the next check or on SIGHUP: new connections get the new certificate,
// an older one keeps working, and a bad pair is refused in the log.
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
			waitUntil(t, p, "the second pair is served", func() bool { return newConnSerial(t, ca, p, key).Cmp(second.serial) == 0 })

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
			if log := p.stderr.String()[before:]; !strings.Contains(log, certFile+" and key file "+keyFile+": tls: private key does not match public key") {
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

// servedSerial lists the pets of p with client and returns the serial
// number of the certificate that the connection presented.
func servedSerial(t *testing.T, client *http.Client, p *serverProcess, key string) *big.Int {
	t.Helper()
	a, err := send(context.Background(), client, apiRequest{method: http.MethodGet, url: p.baseURL + "/pets", key: key})
	if err != nil {
		t.Fatalf("%v; the server's log:\n%s", err, p.stderr)
	}
	if a.status != http.StatusOK {
		t.Fatalf("GET %s/pets answered %v", p.baseURL, a)
	}
	return a.tls.PeerCertificates[0].SerialNumber
}

// newConnSerial is servedSerial on a new connection, which it closes.
func newConnSerial(t *testing.T, ca *testCA, p *serverProcess, key string) *big.Int {
	t.Helper()
	client := ca.client()
	defer client.CloseIdleConnections()
	return servedSerial(t, client, p, key)
}

// The TLS tests make their certificates here: a certificate authority of
// their own, and server certificates for 127.0.0.1 that it signs.

// testCA is a certificate authority made for one test.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

func newTestCA(t *testing.T) *testCA {
	t.Helper()
	ca := &testCA{}
	der, key := ca.sign(t, &x509.Certificate{
		Subject:               pkix.Name{CommonName: "petstore test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	})
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	ca.cert, ca.key = cert, key
	return ca
}

// sign gives tmpl a random serial number and signs it, for a new key, with
// the key of ca, or with the new key itself while ca has none. It returns
// the certificate, in DER, and the new key.
func (ca *testCA) sign(t *testing.T, tmpl *x509.Certificate) ([]byte, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		t.Fatal(err)
	}
	tmpl.SerialNumber = serial.Add(serial, big.NewInt(1))
	parent, parentKey := ca.cert, ca.key
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	return der, key
}

// testPair is a server certificate and its key, in PEM.
type testPair struct {
	serial   *big.Int
	notAfter time.Time
	certPEM  []byte
	keyPEM   []byte
}

// issue makes a certificate for 127.0.0.1 and localhost, valid from
// notBefore to notAfter, with a key of its own.
func (ca *testCA) issue(t *testing.T, notBefore, notAfter time.Time) testPair {
	t.Helper()
	tmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: "127.0.0.1"},
		DNSNames:    []string{"localhost"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:   notBefore,
		NotAfter:    notAfter,
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, key := ca.sign(t, tmpl)
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return testPair{
		serial:   tmpl.SerialNumber,
		notAfter: notAfter,
		certPEM:  pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		keyPEM:   pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}),
	}
}

// valid issues a certificate valid from an hour ago for a day.
func (ca *testCA) valid(t *testing.T) testPair {
	return ca.issue(t, time.Now().Add(-time.Hour), time.Now().Add(24*time.Hour))
}

// client returns an HTTP client that trusts only ca and offers HTTP/2.
// Each call makes a new transport, so its connections are new ones.
func (ca *testCA) client() *http.Client {
	roots := x509.NewCertPool()
	roots.AddCert(ca.cert)
	return &http.Client{
		Timeout: 30 * time.Second,
		Transport: &http.Transport{
			TLSClientConfig:   &tls.Config{RootCAs: roots},
			ForceAttemptHTTP2: true,
		},
	}
}

// writePair writes the pair's certificate and key to the files cert and
// key, replacing each file in one step (a rename), as a deployment would.
func writePair(t *testing.T, p testPair, cert, key string) {
	t.Helper()
	replaceFile(t, cert, p.certPEM)
	replaceFile(t, key, p.keyPEM)
}

func replaceFile(t *testing.T, name string, data []byte) {
	t.Helper()
	tmp := name + ".new"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, name); err != nil {
		t.Fatal(err)
	}
}

// pairFiles writes p into a new directory as cert.pem and key.pem and
// returns their paths.
func pairFiles(t *testing.T, p testPair) (cert, key string) {
	t.Helper()
	dir := t.TempDir()
	cert, key = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	writePair(t, p, cert, key)
	return cert, key
}

// TestNewCertSourceRefuses gives newCertSource each kind of bad key pair:
// it refuses each with an error that names the file at fault and says
// what is wrong with it.
func TestNewCertSourceRefuses(t *testing.T) {
	ca := newTestCA(t)
	good, other := ca.valid(t), ca.valid(t)
	now := time.Now()
	expired := ca.issue(t, now.Add(-48*time.Hour), now.Add(-time.Hour))
	early := ca.issue(t, now.Add(time.Hour), now.Add(48*time.Hour))
	garbage := func(typ string) []byte {
		return []byte("-----BEGIN " + typ + "-----\nbm90IERFUg==\n-----END " + typ + "-----\n")
	}

	tests := []struct {
		name     string
		certPEM  []byte // nil: no file
		keyPEM   []byte // nil: no file
		certDir  bool   // the certificate's path is a directory
		wantFile string // "cert" or "key": the file the error names
		want     string
		wantIs   error
	}{
		{name: "certificate missing", keyPEM: good.keyPEM, wantFile: "cert", want: "cannot be read", wantIs: fs.ErrNotExist},
		{name: "key missing", certPEM: good.certPEM, wantFile: "key", want: "cannot be read", wantIs: fs.ErrNotExist},
		{name: "certificate unreadable", certDir: true, keyPEM: good.keyPEM, wantFile: "cert", want: "is a directory"},
		{name: "certificate not PEM", certPEM: []byte("not a certificate"), keyPEM: good.keyPEM, wantFile: "cert", want: "failed to find any PEM data in certificate input"},
		{name: "key not PEM", certPEM: good.certPEM, keyPEM: []byte("not a key"), wantFile: "key", want: "failed to find any PEM data in key input"},
		{name: "files swapped", certPEM: good.keyPEM, keyPEM: good.certPEM, wantFile: "cert", want: "PEM inputs may have been switched"},
		{name: "key file holds the certificate", certPEM: good.certPEM, keyPEM: good.certPEM, wantFile: "key", want: "found a certificate rather than a key"},
		{name: "certificate corrupt", certPEM: garbage("CERTIFICATE"), keyPEM: good.keyPEM, wantFile: "cert", want: "x509: malformed certificate"},
		{name: "key corrupt", certPEM: good.certPEM, keyPEM: garbage("PRIVATE KEY"), wantFile: "key", want: "failed to parse private key"},
		{name: "mismatched", certPEM: good.certPEM, keyPEM: other.keyPEM, wantFile: "key", want: "private key does not match public key"},
		{name: "expired", certPEM: expired.certPEM, keyPEM: expired.keyPEM, wantFile: "cert", want: "the certificate expired at " + expired.notAfter.UTC().Format(time.RFC3339)},
		{name: "not yet valid", certPEM: early.certPEM, keyPEM: early.keyPEM, wantFile: "cert", want: "the certificate is not valid until"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			files := map[string]string{"cert": filepath.Join(dir, "cert.pem"), "key": filepath.Join(dir, "key.pem")}
			for what, data := range map[string][]byte{"cert": tt.certPEM, "key": tt.keyPEM} {
				if data != nil {
					if err := os.WriteFile(files[what], data, 0o600); err != nil {
						t.Fatal(err)
					}
				}
			}
			if tt.certDir {
				if err := os.Mkdir(files["cert"], 0o700); err != nil {
					t.Fatal(err)
				}
			}
			var log bytes.Buffer
			s, err := newCertSource(files["cert"], files["key"], slog.New(slog.NewTextHandler(&log, nil)))
			if err == nil {
				t.Fatalf("newCertSource accepted the pair, serving %s", describeCert(s.current.Load().Leaf))
			}
			t.Logf("err = %v", err)
			if msg := err.Error(); !strings.Contains(msg, files[tt.wantFile]) || !strings.Contains(msg, tt.want) {
				t.Errorf("error %q: want it to name %s and say %q", msg, files[tt.wantFile], tt.want)
			}
			if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
				t.Errorf("error %q is not %v", err, tt.wantIs)
			}
			if log.Len() > 0 {
				t.Errorf("newCertSource logged; its caller reports the error:\n%s", &log)
			}
		})
	}
}

// TestCertSourceReload changes a certSource's files step by step: a good
// pair replaces the one served; a bad one is refused, logged once, and the
// previous one stays; reload without force leaves unchanged files alone.
func TestCertSourceReload(t *testing.T) {
	ca := newTestCA(t)
	a, b, c, d := ca.valid(t), ca.valid(t), ca.valid(t), ca.valid(t)
	now := time.Now()
	expired := ca.issue(t, now.Add(-48*time.Hour), now.Add(-time.Hour))
	certFile, keyFile := pairFiles(t, a)
	var log bytes.Buffer
	s, err := newCertSource(certFile, keyFile, slog.New(slog.NewTextHandler(&log, nil)))
	if err != nil {
		t.Fatal(err)
	}

	steps := []struct {
		name         string
		change       func(t *testing.T) // nil: the files stay as they are
		force        bool
		wantReplaced bool
		wantErr      string // "": no error
		wantServing  testPair
		wantLog      string // "": nothing logged
	}{
		{name: "unchanged", wantServing: a},
		{name: "new pair", change: func(t *testing.T) { writePair(t, b, certFile, keyFile) },
			wantReplaced: true, wantServing: b, wantLog: "TLS key pair reloaded"},
		{name: "new certificate, old key", change: func(t *testing.T) { replaceFile(t, certFile, c.certPEM) },
			wantErr: "does not match", wantServing: b, wantLog: "the new TLS key pair is refused"},
		{name: "the same bad pair again", wantServing: b},
		{name: "the new key follows", change: func(t *testing.T) { replaceFile(t, keyFile, c.keyPEM) },
			wantReplaced: true, wantServing: c, wantLog: "TLS key pair reloaded"},
		{name: "expired pair", change: func(t *testing.T) { writePair(t, expired, certFile, keyFile) },
			wantErr: "expired", wantServing: c, wantLog: "the new TLS key pair is refused"},
		{name: "key removed", change: func(t *testing.T) { os.Remove(keyFile) },
			wantErr: "cannot be read", wantServing: c, wantLog: "the new TLS key pair is refused"},
		{name: "key still missing", wantServing: c},
		{name: "key missing, forced", force: true,
			wantErr: "cannot be read", wantServing: c, wantLog: "the new TLS key pair is refused"},
		{name: "good pair again", change: func(t *testing.T) { writePair(t, d, certFile, keyFile) },
			wantReplaced: true, wantServing: d, wantLog: "TLS key pair reloaded"},
		{name: "unchanged, forced", force: true, wantReplaced: true, wantServing: d, wantLog: "TLS key pair reloaded"},
	}
	for _, st := range steps {
		// The steps build on each other: stop at the first that fails.
		if !t.Run(st.name, func(t *testing.T) {
			if st.change != nil {
				st.change(t)
			}
			log.Reset()
			replaced, err := s.reload(st.force)
			if replaced != st.wantReplaced {
				t.Errorf("reload(%v) replaced the pair: %v, want %v", st.force, replaced, st.wantReplaced)
			}
			if (err != nil) != (st.wantErr != "") || err != nil && !strings.Contains(err.Error(), st.wantErr) {
				t.Errorf("reload(%v) = %v, want an error saying %q (none for \"\")", st.force, err, st.wantErr)
			}
			pair, _ := s.certificate(nil)
			if diff := cmp.Diff(st.wantServing.serial, pair.Leaf.SerialNumber, cmp.Comparer(func(x, y *big.Int) bool { return x.Cmp(y) == 0 })); diff != "" {
				t.Errorf("serial number of the certificate served (-want +got):\n%s", diff)
			}
			lines := strings.Count(log.String(), "\n")
			if st.wantLog == "" && lines > 0 || st.wantLog != "" && (lines != 1 || !strings.Contains(log.String(), st.wantLog)) {
				t.Errorf("reload logged:\n%s\nwant one line saying %q, or nothing for \"\"", &log, st.wantLog)
			}
			if st.wantErr != "" && !strings.Contains(log.String(), st.wantErr) {
				t.Errorf("the log does not say why the pair was refused (%q):\n%s", st.wantErr, &log)
			}
		}) {
			break
		}
	}
}
