// Command petstore serves the animal store API on its own.
//
// Usage:
//
//	petstore [-addr localhost:8080] [-base-path /v1]
//	         [-data petstore.db | -store memory | -postgres URL]
//	         [-tls-cert FILE -tls-key FILE] [-tls-min-version 1.2]
//	         [-tls-reload-interval 10s] [-store-timeout 5s] [-write-timeout 30s]
//	         [-max-conns N] [-max-bodies 256] [-body-timeout 10s]
//	         [-admin-addr localhost:9090] [-access-log] [-migrate=false]
//	petstore migrate [-postgres URL]
//
// petstore -help lists the flags and the environment variables.
//
// API keys come from PETSTORE_API_KEYS, separated by commas. A key may be
// given a name, as alice:KEY: keys with one name are one caller, so that a
// create retried across a key rotation is replayed rather than made twice;
// a key without a name is named by a fingerprint of it. When the variable
// is empty, petstore makes a random key and prints it once on start, so
// that the first run needs no setup.
//
// Pets are kept in a SQLite file, petstore.db in the working directory,
// unless -data or PETSTORE_DATA names another file (the flag wins). The
// file and its directory's other files (petstore.db-wal and petstore.db-shm,
// SQLite's write-ahead log) are made when missing; a pet is on disk before
// its create is answered, so neither a crash nor a power cut loses it. The
// start-up log gives the file's absolute path.
//
// With -store memory, pets are kept in memory and lost when the process
// stops: for a throwaway run. With -postgres or PETSTORE_POSTGRES_URL
// giving the URL of a PostgreSQL database, such as
// postgres://user:password@host:5432/database, petstore creates or upgrades
// its tables on start (several instances may start at once; nothing is
// changed when they are current) and keeps pets there, so that any number
// of instances can serve one catalogue. "petstore migrate" migrates alone,
// says what it did and exits; with -migrate=false the server does not
// migrate, so that it can run as a role that may not change the schema.
// Either way it checks at start, and on /readyz, that the tables are at
// the version it needs and that the role holds every privilege it needs,
// and otherwise says which command or GRANT fixes it. The flag
// wins over the variable; prefer the variable, as a flag's value, password
// included, is visible to other users of the host. Naming two stores (a
// data file and a PostgreSQL URL, or -store memory and either) stops the
// server at start.
//
// With -tls-cert and -tls-key (or PETSTORE_TLS_CERT and PETSTORE_TLS_KEY;
// the flags win), naming the PEM files of a certificate chain and its
// private key, petstore serves HTTPS, with HTTP/2 for clients that offer
// it, and TLS 1.2 or, with -tls-min-version 1.3, TLS 1.3 at the least. It
// refuses to start on a pair that is missing, unreadable, mismatched,
// expired or not yet valid, saying which file is at fault. The pair is
// read again when either file changes (checked every -tls-reload-interval,
// 10s by default; 0 turns the check off) and on SIGHUP: new connections
// get the new certificate, connections already open keep theirs, and a new
// pair that would be refused is logged while the previous one goes on
// serving. Without TLS, petstore serves plain HTTP and says on start that
// API keys then travel unencrypted unless a proxy in front terminates TLS.
//
// With -admin-addr (or PETSTORE_ADMIN_ADDR; the flag wins), petstore serves
// on that address, apart from the API, /metrics (request counts and
// latencies by route, method and status, and who still calls deprecated
// operations, in the Prometheus text format), /healthz (200 while the
// process runs) and /readyz (200 while the store answers within a second,
// 503 otherwise and while shutting down). When the standard
// OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set,
// it sends a trace span per request over OTLP (HTTP), continuing the
// caller's trace from its traceparent header. With -access-log it logs a
// line per request: method, route, status, error code, duration and the
// caller's principal, never a credential nor the query.
//
// The server logs with log/slog to standard error, prints the URL it
// listens on, cuts off slow or oversized requests with its timeouts and
// header limit (16 KiB for the request line and headers, counted as
// HTTP/1.1 sends them over HTTP/2 too), and on SIGINT or
// SIGTERM stops accepting connections and finishes the requests in flight
// before it exits; a second signal exits at once, with status 1.
//
// Every store call has a deadline, -store-timeout, past which the request
// is answered 503; it must be below -write-timeout, so that the client
// hears the answer. -max-conns caps the connections served at once (by
// default the open-file limit less 64; more wait to be accepted, and a full
// server closes an idle or stalled connection to make room), a 401 closes
// its connection, and OPTIONS * is answered by the API, with 401 without a
// key. -max-bodies caps the requests with a body read at once across the
// process; more wait up to -body-timeout and are then answered 503, and a
// body must arrive within -body-timeout. Over HTTP/2 a connection has at
// most 100 requests open, and one that floods control frames is closed.
//
// Configuration that cannot work (a key no bearer token can carry, a
// PETSTORE_API_KEYS of commas alone, a base path no request can match, a
// store timeout not below the write timeout, a search_path schema that
// does not exist) stops the server at start with exit status 2 and a
// message that says why.
package main

import (
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
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/docspage"
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
	store             storeKind // the store to keep pets in
	dataFile          string    // the SQLite file, for storeSQLite
	postgresURL       string    // for storePostgres
	readHeaderTimeout time.Duration
	shutdownTimeout   time.Duration

	tlsCert, tlsKey   string // both set, or neither
	tlsMinVersion     uint16 // tls.VersionTLS12 or tls.VersionTLS13
	tlsReloadInterval time.Duration

	limits limitFlags

	migrate bool // whether to migrate the PostgreSQL tables before serving

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
	fs.DurationVar(&c.readHeaderTimeout, "read-header-timeout", 5*time.Second, "how long a client may take to send the request headers")
	fs.DurationVar(&c.shutdownTimeout, "shutdown-timeout", 30*time.Second, "how long requests in flight may take to finish on shutdown")
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
	c.limits.register(fs, openFileLimit())
	if err := parseFlags(fs, args, help); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments %q; see -help", fs.Args())
	}
	if err := c.chooseStore(*storeFlag, getenv); err != nil {
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

	if len(c.keys) == 0 {
		key, err := randomKey()
		if err != nil {
			return err
		}
		c.keys = []string{key}
		fmt.Fprintf(stdout, "PETSTORE_API_KEYS is not set; this run accepts the API key %s\n", key)
	}

	store, check, closeStore, err := openStore(ctx, c, logger)
	if err != nil {
		return err
	}
	defer closeStore()

	var accessLog *slog.Logger
	if c.accessLog {
		accessLog = logger
	}
	obs, err := newObservability(ctx, c.adminAddr != "", c.tracing, accessLog)
	if err != nil {
		return err
	}
	defer obs.shutdown(logger)

	auth := apiKeysAuthenticator(c.keys)
	// Watch streams never end on their own: Shutdown would wait for them
	// until its timeout. They end when this is closed (see below), and
	// their clients resume elsewhere, or here after the restart.
	endStreams := make(chan struct{})
	api, err := petstore.New(append([]petstore.Option{
		petstore.WithStore(store),
		petstore.WithAuthenticator(auth),
		petstore.WithBasePath(c.basePath),
		petstore.WithLogger(logger),
		petstore.WithStoreTimeout(c.limits.storeTimeout),
		petstore.WithDocs(docspage.Files()),
		petstore.WithWatch(petstore.Watch{Done: endStreams, Observe: obs.watch}),
	}, obs.options...)...)
	if err != nil {
		return err
	}

	ln, err := net.Listen("tcp", c.addr)
	if err != nil {
		return err
	}
	limited := limitListener(ln, c.limits.maxConns)
	ln = limited
	bodies := newBodyGate(c.limits.maxBodies, bodiesPerConn)
	errorLog := slog.NewLogLogger(logger.Handler(), slog.LevelWarn)
	srv := &http.Server{
		Handler:           limitHead(closeOnUnauthorized(obs.wrap(limitBodies(api, bodies, c.limits.bodyTimeout)))),
		ReadHeaderTimeout: c.readHeaderTimeout,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      c.limits.writeTimeout,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          errorLog,
		ConnContext:       withConnBodies,
		ConnState:         limited.track,
		// OPTIONS * goes to the handler, which asks for a key like
		// everywhere else, rather than to net/http's answer of 200.
		DisableGeneralOptionsHandler: true,
	}
	srv.RegisterOnShutdown(func() { close(endStreams) })
	scheme := "http"
	serve := srv.Serve
	if certs != nil {
		scheme = "https"
		srv.TLSConfig = &tls.Config{MinVersion: c.tlsMinVersion, GetCertificate: certs.certificate}
		h2base := &http.Server{ReadTimeout: srv.ReadTimeout, WriteTimeout: srv.WriteTimeout, IdleTimeout: srv.IdleTimeout,
			ErrorLog: errorLog, ConnState: limited.track}
		if err := serveHTTP2(srv, h2base, logger); err != nil {
			ln.Close()
			return err
		}
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
		a := &admin{metrics: obs.metrics, store: store, check: check, logger: logger,
			redact: func(s string) string { return postgresRedact(s, c.postgresURL) }}
		stopAdmin, err := serveAdmin(ctx, c.adminAddr, a, stdout)
		if err != nil {
			ln.Close()
			return err
		}
		defer stopAdmin()
	}
	url := scheme + "://" + ln.Addr().String() + c.basePath
	logger.Info("petstore: listening", "url", url, "docs", url+petstore.DocsPath, "max_conns", c.limits.maxConns, "open_files", c.limits.openFiles, "max_bodies", c.limits.maxBodies,
		"store_timeout", c.limits.storeTimeout, "write_timeout", c.limits.writeTimeout)
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
