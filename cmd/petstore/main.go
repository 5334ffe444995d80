// Command petstore serves the animal store API on its own.
//
// Usage:
//
//	petstore [flags]
//	petstore migrate [-postgres URL]
//
// petstore -help lists the flags and the environment variables;
// docs/operating.md in the repository explains them.
//
// With no flag, petstore needs no setup: it makes an API key for the run
// and prints it, serves the API on localhost:8080 under /v1, and keeps pets
// in petstore.db, a SQLite file in the working directory, made when missing.
// A pet is on disk before its create is answered. PETSTORE_API_KEYS gives
// the keys instead, separated by commas; NAME:KEY names the caller of a key,
// so that its old and new key share idempotency keys across a rotation.
//
// -data (or PETSTORE_DATA) names another data file, -store memory keeps pets
// in memory for a throwaway run, and -postgres (or PETSTORE_POSTGRES_URL)
// keeps them in PostgreSQL, where several instances can serve one
// catalogue. On PostgreSQL, petstore migrates its tables on start; with
// -migrate=false it does not, so that it can serve as a role that may not
// change the schema, after "petstore migrate" has run as the tables' owner.
// Either way it checks at start, and on /readyz, that the tables are at the
// version it needs and the role holds every privilege, and says which
// command or GRANT fixes it otherwise.
//
// PETSTORE_POSTGRES_REPLICA_URLS, the URLs of hot standbys of that
// database separated by commas, sends reads to them (docs/replicas.md).
//
// -tls-cert and -tls-key serve HTTPS, reloading the pair when its files
// change or on SIGHUP. -admin-addr serves /metrics, /healthz and /readyz
// apart from the API; OTEL_EXPORTER_OTLP_ENDPOINT sends a trace span per
// request; -access-log logs a line per request. Timeouts and limits on
// connections, heads and bodies bound what one client can make the server
// hold. On SIGINT or SIGTERM it finishes the requests in flight and exits;
// a second signal exits at once. Configuration that cannot work stops it at
// start with exit status 2 and a message that says why.
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
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"
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
	addr            string
	basePath        string
	keys            []string
	store           storeKind // the store to keep pets in
	dataFile        string    // the SQLite file, for storeSQLite
	postgresURL     string    // for storePostgres
	replicaURLs     string    // hot standbys to read from, comma-separated; for storePostgres
	shutdownTimeout time.Duration
	watchStreams    int // the watch streams open at once on the server
	watchPerCaller  int // and for one principal

	tlsCert, tlsKey   string // both set, or neither
	tlsMinVersion     uint16 // tls.VersionTLS12 or tls.VersionTLS13
	tlsReloadInterval time.Duration

	limits limitFlags
	rates  rateFlags // the callers' budgets

	migrate bool // whether to migrate the PostgreSQL tables before serving

	backups backupFlags

	adminAddr string // "" for no admin endpoints
	accessLog bool
	tracing   bool // whether to send traces over OTLP
}

// The environment variables that, like -tls-cert and -tls-key, name the
// files of the key pair.
const (
	tlsCertVar = "PETSTORE_TLS_CERT"
	tlsKeyVar  = "PETSTORE_TLS_KEY"
)

func parseConfig(args []string, getenv func(string) string, help io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("petstore", flag.ContinueOnError)
	fs.StringVar(&c.addr, "addr", "localhost:8080", "`address` to listen on; port 0 picks a free port")
	fs.StringVar(&c.basePath, "base-path", petstore.DefaultBasePath, "`path` under which the API is served")
	fs.DurationVar(&c.shutdownTimeout, "shutdown-timeout", 30*time.Second, "how long requests in flight may take to finish on shutdown")
	fs.IntVar(&c.watchStreams, "watch-max-streams", petstore.DefaultMaxStreams, "watch streams (GET /pets as text/event-stream) open at once; more are answered 429")
	fs.IntVar(&c.watchPerCaller, "watch-max-per-caller", petstore.DefaultMaxStreamsPerPrincipal, "watch streams that one caller may hold open at once; more are answered 429")
	storeFlag := fs.String("store", "", "`kind` of store to keep pets in: sqlite (the default: a data file), memory (lost on exit) or postgres")
	fs.StringVar(&c.dataFile, "data", "", "SQLite `file` to keep pets in (default $"+dataFileVar+", else "+defaultDataFile+" in the working directory)")
	fs.StringVar(&c.postgresURL, "postgres", "", "PostgreSQL `URL` to keep pets in, instead of a data file (default $"+postgresURLVar+")")
	fs.StringVar(&c.tlsCert, "tls-cert", "", "PEM `file` of the certificate chain to serve HTTPS with, leaf first; needs -tls-key (default $"+tlsCertVar+")")
	fs.StringVar(&c.tlsKey, "tls-key", "", "PEM `file` of the private key of -tls-cert (default $"+tlsKeyVar+")")
	minVersion := fs.String("tls-min-version", "1.2", "lowest TLS `version` to accept: 1.2 or 1.3")
	fs.DurationVar(&c.tlsReloadInterval, "tls-reload-interval", 10*time.Second, "how often to check the TLS files for a new key pair; 0 checks only on SIGHUP")
	fs.BoolVar(&c.migrate, "migrate", true, "create or upgrade the PostgreSQL tables on start (nothing is changed when they are current); "+
		"with -migrate=false, run '"+migrateCommand+"' first, as the tables' owner, and serve as a role without the right to create")
	fs.StringVar(&c.adminAddr, "admin-addr", "", "`address` to serve /metrics, /healthz and /readyz on, apart from the API; empty for none (default $"+adminAddrVar+")")
	fs.BoolVar(&c.accessLog, "access-log", false, "log a line per request")
	c.limits.register(fs)
	c.rates.register(fs)
	c.backups.register(fs)
	if err := parseFlags(fs, args, help); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments %q; see -help", fs.Args())
	}
	if err := c.chooseStore(*storeFlag, getenv); err != nil {
		return c, err
	}
	if err := c.backups.fromEnv(fs, getenv, c.store); err != nil {
		return c, err
	}
	if err := c.rates.fromEnv(fs, getenv); err != nil {
		return c, err
	}
	if c.adminAddr == "" {
		c.adminAddr = getenv(adminAddrVar)
	}
	if c.tlsCert == "" {
		c.tlsCert = getenv(tlsCertVar)
	}
	if c.tlsKey == "" {
		c.tlsKey = getenv(tlsKeyVar)
	}
	switch {
	case c.tlsCert != "" && c.tlsKey == "":
		return c, fmt.Errorf("a TLS certificate is given (%s) but no key: set -tls-key or %s too", c.tlsCert, tlsKeyVar)
	case c.tlsKey != "" && c.tlsCert == "":
		return c, fmt.Errorf("a TLS key is given (%s) but no certificate: set -tls-cert or %s too", c.tlsKey, tlsCertVar)
	}
	switch *minVersion {
	case "1.2":
		c.tlsMinVersion = tls.VersionTLS12
	case "1.3":
		c.tlsMinVersion = tls.VersionTLS13
	default:
		return c, fmt.Errorf("-tls-min-version %q: want 1.2 or 1.3", *minVersion)
	}
	if c.tlsReloadInterval < 0 {
		return c, fmt.Errorf("-tls-reload-interval %v: want 0 or more", c.tlsReloadInterval)
	}
	if err := c.limits.check(); err != nil {
		return c, err
	}
	var err error
	if c.tracing, err = tracingConfig(getenv); err != nil {
		return c, err
	}
	c.keys, err = parseAPIKeys(getenv(apiKeysVar))
	return c, err
}

// run serves until ctx is done, then shuts down gracefully; or, given the
// subcommand migrate, migrates the store's tables and returns.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "migrate" {
		return runMigrate(ctx, args[1:], getenv, stdout)
	}
	if len(args) > 0 && dataCommand(args[0]) != nil {
		return dataCommand(args[0])(ctx, args[1:], getenv, stdout, stderr)
	}
	c, err := parseConfig(args, getenv, stdout)
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(stderr, nil))

	// The key pair is checked first, so that a bad one stops the server
	// before it prints a key or touches a database.
	var certs *certSource
	if c.tlsCert != "" {
		if certs, err = newCertSource(c.tlsCert, c.tlsKey, logger); err != nil {
			return err
		}
	}

	// So do options that the handler would refuse, before a key is printed
	// or a database touched.
	if err := checkHandlerConfig(c); err != nil {
		return err
	}

	store, check, closeStore, err := openStore(ctx, c, logger)
	if err != nil {
		return err
	}
	defer closeStore()
	// Only now that the store is open and checked: a run that refuses to
	// serve prints no key.
	if len(c.keys) == 0 {
		if c.keys, err = madeKey(store, stdout); err != nil {
			return err
		}
	}
	sqlite, _ := store.(*sqlitestore.Store)
	backups, stopBackups, err := startBackups(ctx, sqlite, c.backups, logger)
	if err != nil {
		return err
	}
	defer stopBackups()

	var accessLog *slog.Logger
	if c.accessLog {
		accessLog = logger
	}
	obs, err := newObservability(ctx, c.adminAddr != "", c.tracing, accessLog, replicaCollectors(store)...)
	if err != nil {
		return err
	}
	defer obs.shutdown(logger)
	if obs.meters != nil {
		if err := registerDataMetrics(obs.meters, sqlite, backups); err != nil {
			return err
		}
	}

	rateLimit, closeLimiters, err := c.rates.limiters(ctx)
	if err != nil {
		return err
	}
	defer closeLimiters()
	rateLimit.MaxInFlight = c.limits.maxInFlight

	auth := apiKeysAuthenticator(c.keys)
	// Watch streams never end on their own: Shutdown would wait for them
	// until its timeout. They end when this is closed (see below), and
	// their clients resume elsewhere, or here after the restart.
	endStreams := make(chan struct{})
	api, err := petstore.New(append([]petstore.Option{
		petstore.WithRateLimit(rateLimit),
		petstore.WithStore(store),
		petstore.WithAuthenticator(auth),
		petstore.WithBasePath(c.basePath),
		petstore.WithLogger(logger),
		petstore.WithStoreTimeout(c.limits.storeTimeout),
		petstore.WithDocs(docspage.Files()),
		petstore.WithWatch(petstore.Watch{Done: endStreams, Observe: obs.watch,
			MaxStreams: c.watchStreams, MaxStreamsPerPrincipal: c.watchPerCaller}),
	}, obs.options...)...)
	if err != nil {
		return err
	}

	ln, err := net.Listen("tcp", c.addr)
	if err != nil {
		return err
	}
	srv := c.limits.newServer(obs.wrap(api))
	srv.ErrorLog = slog.NewLogLogger(logger.Handler(), slog.LevelWarn)
	srv.RegisterOnShutdown(func() { close(endStreams) })
	scheme := "http"
	serve := srv.Serve
	if certs != nil {
		scheme = "https"
		srv.TLSConfig = &tls.Config{MinVersion: c.tlsMinVersion, GetCertificate: certs.certificate}
		serve = func(ln net.Listener) error { return srv.ServeTLS(ln, "", "") }
		stopWatching := watchCerts(certs, c.tlsReloadInterval)
		defer stopWatching()
		logger.Info("petstore: serving HTTPS and HTTP/2",
			"cert", c.tlsCert, "key", c.tlsKey, "serving", describeCert(certs.current.Load().Leaf),
			"min_version", tls.VersionName(c.tlsMinVersion), "reload_interval", c.tlsReloadInterval)
	} else {
		logger.Warn("petstore: serving plain HTTP: API keys travel unencrypted unless a proxy in front terminates TLS; " +
			"-tls-cert and -tls-key serve HTTPS")
	}
	if c.adminAddr != "" {
		a := &admin{metrics: obs.metrics, store: store, check: check, replicas: replicaProbes(store), logger: logger,
			redact: func(s string) string { return postgresRedact(s, c.postgresURL) }}
		if backups != nil {
			a.backups = backups.check
		}
		stopAdmin, err := serveAdmin(ctx, c.adminAddr, a, stdout)
		if err != nil {
			ln.Close()
			return err
		}
		defer stopAdmin()
	}
	url := scheme + "://" + ln.Addr().String() + c.basePath
	logger.Info("petstore: listening", "url", url, "docs", url+petstore.DocsPath, "max_in_flight", c.limits.maxInFlight,
		"store_timeout", c.limits.storeTimeout, "write_timeout", c.limits.writeTimeout,
		"read_limit", c.rates.reads.String(), "create_limit", c.rates.creates.String(), "limits_in", cmp.Or(redisRedact(c.rates.redisURL), "process"))
	fmt.Fprintf(stdout, "serving %s/pets\n", url)

	served := make(chan error, 1)
	go func() { served <- serve(ln) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	logger.Info("petstore: shutting down; finishing requests in flight")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), c.shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	logger.Info("petstore: stopped")
	return nil
}

// watchCerts reloads certs on SIGHUP and, when interval is positive, every
// interval when its files change, until the returned function is called.
func watchCerts(certs *certSource, interval time.Duration) (stop func()) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		certs.watch(ctx, interval, hup)
	}()
	return func() {
		signal.Stop(hup)
		cancel()
		<-done
	}
}

// randomKey returns a key of 256 random bits, in the base64url alphabet that
// bearer tokens allow.
func randomKey() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}
