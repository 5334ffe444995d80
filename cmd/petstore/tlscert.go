package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// A certSource holds the key pair presented to new connections, replaced by
// one from its files that crypto/tls accepts and whose certificate is valid
// now. certificate may be called at any time; load and reload by one
// goroutine at a time, newCertSource's and then watch's.
type certSource struct {
	certFile, keyFile string
	logger            *slog.Logger
	current           atomic.Pointer[tls.Certificate]
	tried             string // what reading the files last gave, an error included
}

// newCertSource loads the key pair in certFile and keyFile.
func newCertSource(certFile, keyFile string, logger *slog.Logger) (*certSource, error) {
	s := &certSource{certFile: certFile, keyFile: keyFile, logger: logger}
	if _, err := s.load(true); err != nil {
		return nil, err
	}
	return s, nil
}

// certificate is the GetCertificate of the server's tls.Config.
func (s *certSource) certificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	return s.current.Load(), nil
}

// load reads the files and, when force is set or they differ from what it
// last tried, presents their pair; it reports whether it did.
func (s *certSource) load(force bool) (bool, error) {
	certPEM, err1 := os.ReadFile(s.certFile)
	keyPEM, err2 := os.ReadFile(s.keyFile)
	err := errors.Join(err1, err2)
	state := fmt.Sprint(err) + "\x00" + string(certPEM) + "\x00" + string(keyPEM)
	if !force && state == s.tried {
		return false, nil
	}
	s.tried = state
	if err != nil {
		return false, fmt.Errorf("the TLS key pair cannot be read: %w", err)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return false, fmt.Errorf("TLS certificate file %s and key file %s: %w", s.certFile, s.keyFile, err)
	}
	switch now, leaf := time.Now(), pair.Leaf; {
	case now.After(leaf.NotAfter):
		return false, fmt.Errorf("TLS certificate file %s: the certificate expired at %s", s.certFile, leaf.NotAfter.UTC().Format(time.RFC3339))
	case now.Before(leaf.NotBefore):
		return false, fmt.Errorf("TLS certificate file %s: the certificate is not valid until %s", s.certFile, leaf.NotBefore.UTC().Format(time.RFC3339))
	}
	s.current.Store(&pair)
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
	tick := time.Tick(interval) // nil, never ready, unless interval is positive
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
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
	})
	return func() {
		signal.Stop(hup)
		close(done)
		wg.Wait()
	}
}

// describeCert says which certificate a log line is about.
func describeCert(c *x509.Certificate) string {
	return fmt.Sprintf("serial %x for %v %v, valid until %s", c.SerialNumber, c.DNSNames, c.IPAddresses, c.NotAfter.UTC().Format(time.RFC3339))
}
