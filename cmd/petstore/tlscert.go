package main

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// parseKeyPair returns the key pair in certPEM and keyPEM, the contents of
// certFile and keyFile, refusing with an error that names the file at fault
// a pair that crypto/tls refuses or a certificate not valid at now.
func parseKeyPair(certFile, keyFile string, certPEM, keyPEM []byte, now time.Time) (*tls.Certificate, error) {
	certBlock := firstPEMBlock(certPEM, "CERTIFICATE")
	switch {
	case certBlock == nil && firstPEMBlock(certPEM, "PRIVATE KEY") != nil:
		return nil, fmt.Errorf("TLS certificate file %s holds a private key, not a certificate; are the certificate and key files swapped?", certFile)
	case certBlock == nil:
		return nil, fmt.Errorf("TLS certificate file %s holds no PEM block of type CERTIFICATE", certFile)
	}
	if _, err := x509.ParseCertificate(certBlock.Bytes); err != nil {
		return nil, fmt.Errorf("TLS certificate file %s: the certificate cannot be parsed: %w", certFile, err)
	}
	keyBlock := firstPEMBlock(keyPEM, "PRIVATE KEY")
	switch {
	case keyBlock == nil && firstPEMBlock(keyPEM, "CERTIFICATE") != nil:
		return nil, fmt.Errorf("TLS key file %s holds a certificate, not a private key; are the certificate and key files swapped?", keyFile)
	case keyBlock == nil:
		return nil, fmt.Errorf("TLS key file %s holds no PEM block of a private key", keyFile)
	}
	// The encodings that crypto/tls accepts.
	_, err1 := x509.ParsePKCS1PrivateKey(keyBlock.Bytes)
	_, err8 := x509.ParsePKCS8PrivateKey(keyBlock.Bytes)
	if _, errEC := x509.ParseECPrivateKey(keyBlock.Bytes); err1 != nil && err8 != nil && errEC != nil {
		return nil, fmt.Errorf("TLS key file %s: the private key cannot be parsed: it is neither PKCS #1, PKCS #8 nor SEC 1", keyFile)
	}
	// Both parse, so what crypto/tls can refuse is a key that is not the
	// certificate's, or a certificate after the first that is not valid.
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("TLS key file %s does not match the certificate in %s: %w", keyFile, certFile, err)
	}
	switch leaf := pair.Leaf; {
	case now.After(leaf.NotAfter):
		return nil, fmt.Errorf("TLS certificate file %s: the certificate expired at %s", certFile, leaf.NotAfter.UTC().Format(time.RFC3339))
	case now.Before(leaf.NotBefore):
		return nil, fmt.Errorf("TLS certificate file %s: the certificate is not valid until %s", certFile, leaf.NotBefore.UTC().Format(time.RFC3339))
	}
	return &pair, nil
}

// firstPEMBlock returns the first PEM block in data whose type ends with
// typ, or nil.
func firstPEMBlock(data []byte, typ string) *pem.Block {
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil || strings.HasSuffix(b.Type, typ) {
			return b
		}
	}
}

// A certSource holds the key pair that the server presents to new
// connections, and replaces it by one that its files give and parseKeyPair
// accepts. Its methods are safe for concurrent use.
type certSource struct {
	certFile, keyFile string
	logger            *slog.Logger
	current           atomic.Pointer[tls.Certificate]

	mu    sync.Mutex // held by load
	tried string     // what reading the files last gave, an error included
}

// newCertSource loads the key pair in certFile and keyFile.
func newCertSource(certFile, keyFile string, logger *slog.Logger) (*certSource, error) {
	s := &certSource{certFile: certFile, keyFile: keyFile, logger: logger}
	if _, err := s.load(true); err != nil {
		return nil, err
	}
	return s, nil
}

// certificate returns the key pair to present; it is the GetCertificate of
// the server's tls.Config.
func (s *certSource) certificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	return s.current.Load(), nil
}

// load reads the files and, when force is set or they differ from what it
// last tried, parses and presents their pair; it reports whether it did.
func (s *certSource) load(force bool) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var pems [2][]byte
	var err error
	for i, f := range [2][2]string{{"certificate", s.certFile}, {"key", s.keyFile}} {
		if pems[i], err = os.ReadFile(f[1]); err != nil {
			if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
				err = pe.Err // the file is named below, once
			}
			err = fmt.Errorf("TLS %s file %s cannot be read: %w", f[0], f[1], err)
			break
		}
	}
	state := fmt.Sprintf("%v\x00%d\x00%s%s", err, len(pems[0]), pems[0], pems[1])
	if !force && state == s.tried {
		return false, nil
	}
	s.tried = state
	var pair *tls.Certificate
	if err == nil {
		pair, err = parseKeyPair(s.certFile, s.keyFile, pems[0], pems[1], time.Now())
	}
	if err != nil {
		return false, err
	}
	s.current.Store(pair)
	return true, nil
}

// reload is load that logs what it refuses and what it presents, so that a
// bad pair is logged once.
func (s *certSource) reload(force bool) (bool, error) {
	replaced, err := s.load(force)
	if err != nil {
		s.logger.Error("petstore: the new TLS key pair is refused; new connections still get the previous certificate",
			"err", err, "serving", describeCert(s.current.Load().Leaf))
	} else if replaced {
		s.logger.Info("petstore: TLS key pair reloaded; new connections get its certificate",
			"cert", s.certFile, "key", s.keyFile, "serving", describeCert(s.current.Load().Leaf))
	}
	return replaced, err
}

// watch reloads the key pair on SIGHUP and, when interval is positive,
// every interval, until stop.
func (s *certSource) watch(interval time.Duration) (stop func()) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		var tick <-chan time.Time
		if interval > 0 {
			t := time.NewTicker(interval)
			defer t.Stop()
			tick = t.C
		}
		for {
			select {
			case <-done:
				return
			case <-hup:
				s.reload(true) // it logs what it refuses
			case <-tick:
				s.reload(false)
			}
		}
	}()
	return func() {
		signal.Stop(hup)
		close(done)
		<-stopped
	}
}

// describeCert says which certificate a log line is about.
func describeCert(c *x509.Certificate) string {
	names := append([]string(nil), c.DNSNames...)
	for _, ip := range c.IPAddresses {
		names = append(names, ip.String())
	}
	if len(names) == 0 && c.Subject.CommonName != "" {
		names = append(names, c.Subject.CommonName)
	}
	return fmt.Sprintf("serial %s for %s, valid until %s",
		c.SerialNumber.Text(16), strings.Join(names, ","), c.NotAfter.UTC().Format(time.RFC3339))
}
