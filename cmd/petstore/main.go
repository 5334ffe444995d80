// Command petstore serves the animal store API on its own.
//
// Usage:
//
//	petstore [flags]
//	petstore migrate [-postgres URL]
//	petstore backup|restore|export|import ...
//
// With no flag it makes an API key on its first start, keeps it in
// petstore.db.key and prints it, serves the API on localhost:8080 under /v1,
// and keeps pets in petstore.db, a SQLite file in the working directory.
// -store memory keeps pets in memory, and -postgres (or
// PETSTORE_POSTGRES_URL) in PostgreSQL. petstore -help lists the flags and
// the environment variables; docs/operating.md explains them. On SIGINT or
// SIGTERM it finishes the requests in flight and exits; a second signal exits
// at once. Configuration that cannot work stops it at start with exit status
// 2 and a message that says why.
package main

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"github.com/petstore-go/petstore/internal/wire"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"time"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/docspage"
	"github.com/petstore-go/petstore/sqlitestore"
)

func main() {
	ctx, stop := shutdownSignals(os.Stderr)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "petstore:", err)
		os.Exit(2)
	}
}

// config is what the flags and the environment set.
type config struct {
	addr              string
	basePath          string
	keys              []string
	storeFlag         string    // -store
	store             storeKind // the store chosen
	dataFile          string
	postgresURL       string
	postgresListenURL string
	replicaURLs       string
	shutdownTimeout   time.Duration
	watchStreams      int
	watchPerCaller    int
	tlsCert, tlsKey   string
	tlsMinFlag        string // -tls-min-version
	tlsMinVersion     uint16
	tlsReloadInterval time.Duration
	limits            limitFlags
	rates             rateFlags
	migrate           bool
	backups           backupFlags
	adminAddr         string
	accessLog         bool
	tracing           bool
}

// The variables of -tls-cert and -tls-key.
const (
	tlsCertVar = "PETSTORE_TLS_CERT"
	tlsKeyVar  = "PETSTORE_TLS_KEY"
)

func parseConfig(args []string, getenv func(string) string, help io.Writer) (config, error) {
	var c config
	table := c.settings()
	given, err := parseSettings(flag.NewFlagSet("petstore", flag.ContinueOnError), table, args, getenv, help, serverIntro)
	if err != nil {
		return c, err
	}
	// chooseStore reads the stores' variables itself, to name them in its
	// errors, but not those of flags given.
	if !given["data"] {
		c.dataFile = ""
	}
	if !given["postgres"] {
		c.postgresURL = ""
	}
	if err := c.chooseStore(c.storeFlag, func(k string) string {
		for _, s := range table {
			if s.env == k && given[s.name] {
				return ""
			}
		}
		return getenv(k)
	}); err != nil {
		return c, err
	}
	switch {
	case c.tlsCert != "" && c.tlsKey == "":
		return c, fmt.Errorf("a TLS certificate is given (%s) but no key: set -tls-key or %s too", c.tlsCert, tlsKeyVar)
	case c.tlsKey != "" && c.tlsCert == "":
		return c, fmt.Errorf("a TLS key is given (%s) but no certificate: set -tls-cert or %s too", c.tlsKey, tlsCertVar)
	}
	switch c.tlsMinFlag {
	case "1.2":
		c.tlsMinVersion = tls.VersionTLS12
	case "1.3":
		c.tlsMinVersion = tls.VersionTLS13
	default:
		return c, fmt.Errorf("-tls-min-version %q: want 1.2 or 1.3", c.tlsMinFlag)
	}
	if c.tlsReloadInterval < 0 {
		return c, fmt.Errorf("-tls-reload-interval %v: want 0 or more", c.tlsReloadInterval)
	}
	for _, check := range []func() error{c.limits.check, c.rates.check, func() error { return c.backups.check(c.store) }} {
		if err := check(); err != nil {
			return c, err
		}
	}
	if c.tracing, err = tracingConfig(getenv); err != nil {
		return c, err
	}
	c.keys, err = parseAPIKeys(getenv(apiKeysVar))
	return c, err
}

// run serves until ctx is done, then shuts down gracefully; or runs the
// subcommand that args name.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "migrate" {
		return runMigrate(ctx, args[1:], getenv, stdout)
	}
	if len(args) > 0 && dataCommands[args[0]] != nil {
		return dataCommands[args[0]](ctx, args[1:], getenv, stdout, stderr)
	}
	c, err := parseConfig(args, getenv, stdout)
	if err != nil {
		return err
	}
	s := &server{c: c, logger: slog.New(slog.NewTextHandler(stderr, nil)), stdout: stdout}
	defer s.close()
	if err := s.open(ctx); err != nil {
		return err
	}
	if err := s.buildHandler(ctx); err != nil {
		return err
	}
	ln, err := s.listen(ctx)
	if err != nil {
		return err
	}
	return s.serve(ctx, ln)
}

// server is what run holds while it serves, and closers close it.
type server struct {
	c       config
	logger  *slog.Logger
	stdout  io.Writer
	closers []func()

	certs   *certSource // nil for plain HTTP
	store   petstore.Store
	check   func(context.Context) error // the store's readiness
	backups *backupScheduler            // nil without scheduled backups
	obs     *observability
	srv     *http.Server
}

// close closes what open and buildHandler opened.
func (s *server) close() {
	for _, f := range slices.Backward(s.closers) {
		f()
	}
}

// open checks the key pair and the handler's options, then opens the
// store, the key, the backups and the observability, in that order.
func (s *server) open(ctx context.Context) error {
	c, logger := s.c, s.logger
	var err error
	if c.tlsCert != "" {
		if s.certs, err = newCertSource(c.tlsCert, c.tlsKey, logger); err != nil {
			return err
		}
	}
	if err := checkHandlerConfig(c); err != nil {
		return err
	}
	store, check, closeStore, err := openStore(ctx, c, logger)
	if err != nil {
		return err
	}
	s.store, s.check, s.closers = store, check, append(s.closers, closeStore)
	// Only now: a run that refuses to serve prints no key.
	if len(c.keys) == 0 {
		if s.c.keys, err = madeKey(store, s.stdout); err != nil {
			return err
		}
	}
	sqlite, _ := store.(*sqlitestore.Store)
	backups, stopBackups, err := startBackups(ctx, sqlite, c.backups, logger)
	if err != nil {
		return err
	}
	s.backups, s.closers = backups, append(s.closers, stopBackups)
	var accessLog *slog.Logger
	if c.accessLog {
		accessLog = logger
	}
	if s.obs, err = newObservability(ctx, c.adminAddr != "", c.tracing, accessLog, replicaCollectors(store)...); err != nil {
		return err
	}
	s.closers = append(s.closers, func() { s.obs.shutdown(logger) })
	if s.obs.meters != nil {
		return registerDataMetrics(s.obs.meters, sqlite, backups)
	}
	return nil
}

// buildHandler makes the API handler and the http.Server that serves it.
func (s *server) buildHandler(ctx context.Context) error {
	c := s.c
	rateLimit, closeLimiters, err := c.rates.limiters(ctx, s.logger)
	if err != nil {
		return err
	}
	s.closers = append(s.closers, closeLimiters)
	rateLimit.MaxInFlight = c.limits.maxInFlight
	// Watch streams end when this is closed, on shutdown, rather than hold
	// Shutdown until its timeout.
	endStreams := make(chan struct{})
	api, err := petstore.New(slices.Concat(handlerOptions(c), []petstore.Option{
		petstore.WithRateLimit(rateLimit),
		petstore.WithStore(s.store),
		petstore.WithLogger(s.logger),
		petstore.WithDocs(docspage.Files()),
		petstore.WithWatch(petstore.Watch{Done: endStreams, Observe: s.obs.watch,
			MaxStreams: c.watchStreams, MaxStreamsPerPrincipal: c.watchPerCaller}),
	}, s.obs.options)...)
	if err != nil {
		return err
	}
	s.srv = c.limits.newServer(s.obs.wrap(api))
	s.srv.ErrorLog = slog.NewLogLogger(s.logger.Handler(), slog.LevelWarn)
	s.srv.RegisterOnShutdown(func() { close(endStreams) })
	if s.certs != nil {
		s.srv.TLSConfig = &tls.Config{MinVersion: c.tlsMinVersion, GetCertificate: s.certs.certificate}
	}
	return nil
}

// listen listens on the API's address and serves the admin endpoints.
func (s *server) listen(ctx context.Context) (net.Listener, error) {
	c, logger := s.c, s.logger
	ln, err := net.Listen("tcp", c.addr)
	if err != nil {
		return nil, err
	}
	s.closers = append(s.closers, func() { ln.Close() })
	scheme := "http"
	if s.certs != nil {
		scheme = "https"
		s.closers = append(s.closers, s.certs.watch(c.tlsReloadInterval))
		logger.Info("petstore: serving HTTPS and HTTP/2",
			"cert", c.tlsCert, "key", c.tlsKey, "serving", describeCert(s.certs.current.Load().Leaf),
			"min_version", tls.VersionName(c.tlsMinVersion), "reload_interval", c.tlsReloadInterval)
	} else {
		logger.Warn("petstore: serving plain HTTP: API keys travel unencrypted unless a proxy in front terminates TLS; " +
			"-tls-cert and -tls-key serve HTTPS")
	}
	if c.adminAddr != "" {
		a := &admin{metrics: s.obs.metrics, store: s.store, check: s.check, replicas: replicaProbes(s.store), logger: logger,
			redact: func(u string) string { return postgresRedact(u, c.postgresURL) }}
		if s.backups != nil {
			a.backups = s.backups.check
		}
		stopAdmin, err := serveAdmin(ctx, c.adminAddr, a, s.stdout)
		if err != nil {
			return nil, err
		}
		s.closers = append(s.closers, stopAdmin)
	}
	url := scheme + "://" + ln.Addr().String() + c.basePath
	logger.Info("petstore: listening", "url", url, "docs", url+wire.DocsPath, "max_in_flight", c.limits.maxInFlight,
		"store_timeout", c.limits.storeTimeout, "read_timeout", c.limits.readTimeout, "write_timeout", c.limits.writeTimeout,
		"read_limit", c.rates.reads.String(), "create_limit", c.rates.creates.String(), "limits_in", cmp.Or(redisRedact(c.rates.redisURL), "process"))
	fmt.Fprintf(s.stdout, "serving %s/pets\n", url)
	return ln, nil
}

// serve serves on ln until ctx is done, then shuts down within
// -shutdown-timeout.
func (s *server) serve(ctx context.Context, ln net.Listener) error {
	served := make(chan error, 1)
	go func() {
		if s.certs != nil {
			served <- s.srv.ServeTLS(ln, "", "")
		} else {
			served <- s.srv.Serve(ln)
		}
	}()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	s.logger.Info("petstore: shutting down; finishing requests in flight")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), s.c.shutdownTimeout)
	defer cancel()
	if err := s.srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	s.logger.Info("petstore: stopped")
	return nil
}

// randomKey returns a key of 256 random bits in base64url.
func randomKey() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}
