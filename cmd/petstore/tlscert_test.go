package main

import (
	"bytes"
	"errors"
	"io/fs"
	"log/slog"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestNewCertSourceRefuses gives newCertSource each kind of bad key pair:
// it refuses each with an error that names the file at fault and says
// what is wrong with it.
func TestNewCertSourceRefuses(t *testing.T) {
	ca := newTestCA(t)
	good := ca.valid(t)
	other := ca.valid(t)
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
		{name: "certificate unreadable", certDir: true, keyPEM: good.keyPEM, wantFile: "cert", want: "cannot be read: is a directory"},
		{name: "certificate not PEM", certPEM: []byte("not a certificate"), keyPEM: good.keyPEM, wantFile: "cert", want: "holds no PEM block of type CERTIFICATE"},
		{name: "key not PEM", certPEM: good.certPEM, keyPEM: []byte("not a key"), wantFile: "key", want: "holds no PEM block of a private key"},
		{name: "files swapped", certPEM: good.keyPEM, keyPEM: good.certPEM, wantFile: "cert", want: "holds a private key, not a certificate; are the certificate and key files swapped?"},
		{name: "key file holds the certificate", certPEM: good.certPEM, keyPEM: good.certPEM, wantFile: "key", want: "holds a certificate, not a private key"},
		{name: "certificate corrupt", certPEM: garbage("CERTIFICATE"), keyPEM: good.keyPEM, wantFile: "cert", want: "the certificate cannot be parsed"},
		{name: "key corrupt", certPEM: good.certPEM, keyPEM: garbage("PRIVATE KEY"), wantFile: "key", want: "the private key cannot be parsed"},
		{name: "mismatched", certPEM: good.certPEM, keyPEM: other.keyPEM, wantFile: "key", want: "does not match the certificate in"},
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

// TestCertSourceReload takes a certSource through a sequence of changes to
// its files: a good new pair replaces the one served; a bad one, such as the
// state half-way through a rotation (new certificate, old key), is refused,
// logged once and leaves the previous pair serving; and reload without force
// leaves files that have not changed alone.
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
			switch {
			case st.wantErr == "" && err != nil:
				t.Errorf("reload(%v) = %v, want no error", st.force, err)
			case st.wantErr != "" && (err == nil || !strings.Contains(err.Error(), st.wantErr)):
				t.Errorf("reload(%v) = %v, want an error saying %q", st.force, err, st.wantErr)
			}
			pair, _ := s.certificate(nil)
			if diff := cmp.Diff(st.wantServing.serial, pair.Leaf.SerialNumber, cmp.Comparer(func(x, y *big.Int) bool { return x.Cmp(y) == 0 })); diff != "" {
				t.Errorf("serial number of the certificate served (-want +got):\n%s", diff)
			}
			lines := strings.Count(log.String(), "\n")
			switch {
			case st.wantLog == "" && lines > 0:
				t.Errorf("reload logged, want nothing:\n%s", &log)
			case st.wantLog != "" && (lines != 1 || !strings.Contains(log.String(), st.wantLog)):
				t.Errorf("reload logged:\n%s\nwant one line saying %q", &log, st.wantLog)
			}
			if st.wantErr != "" && !strings.Contains(log.String(), st.wantErr) {
				t.Errorf("the log does not say why the pair was refused (%q):\n%s", st.wantErr, &log)
			}
		}) {
			break
		}
	}
}
