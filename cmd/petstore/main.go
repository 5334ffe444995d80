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
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/debug"
	"slices"
	"syscall"
	"time"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/docspage"
	"github.com/petstore-go/petstore/internal/wire"
	"github.com/petstore-go/petstore/memstore"
	"github.com/petstore-go/petstore/sqlitestore"
)

func main() {
	setGCPercent(os.Getenv)
	ctx, stop := shutdownSignals(os.Stderr)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "petstore:", err)
		os.Exit(2)
	}
}

// gcPercent is the collector's GOGC unless the environment sets one. Every
// cycle marks the megabyte of pointers that the linked-in stores and
// telemetry hold, however few pets there are; at Go's default of 100 a
// request costs more than in a bare http.Server (bench/instructions.sh). At
// 200 cycles come half as often, for a heap of up to three times its live size.
const gcPercent = 200

// setGCPercent sets the collector's percentage to gcPercent unless getenv
// sets GOGC (which the runtime has read, and which wins); it reports whether.
func setGCPercent(getenv func(string) string) bool {
	if getenv("GOGC") != "" {
		return false
	}
	debug.SetGCPercent(gcPercent)
	return true
}

const exitAtOnce = 1 // the exit status after a second signal

// shutdownSignals returns a context done on the first SIGINT or SIGTERM; a
// second one logs to logOut and exits at once with status exitAtOnce.
func shutdownSignals(logOut io.Writer) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sigs
		cancel()
		sig := <-sigs
		slog.New(slog.NewTextHandler(logOut, nil)).Error(
			"petstore: second signal during shutdown; exiting at once, abandoning requests in flight", "signal", sig.String())
		os.Exit(exitAtOnce)
	}()
	return ctx, func() { signal.Stop(sigs); cancel() }
}

// config is what the flags and the environment set.
type config struct {
	addr, basePath, dataFile, adminAddr         string
	postgresURL, postgresListenURL, replicaURLs string
	keys                                        []petstore.APIKey
	store                                       storeKind // -store, then the store chosen
	tlsCert, tlsKey                             string
	tlsMinFlag                                  string // -tls-min-version
	tlsMinVersion                               uint16 // what tlsMinFlag names
	shutdownTimeout, tlsReloadInterval          time.Duration
	watchStreams, watchPerCaller                int
	limits                                      limitFlags
	rates                                       rateFlags
	backups                                     backupFlags
	migrate, accessLog, tracing                 bool
}

// parseConfig reads the flags in args and the environment, refusing what cannot work.
func parseConfig(args []string, getenv func(string) string, help io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("petstore", flag.ContinueOnError)
	given, err := parseSettings(fs, c.settings(), args, getenv, help, serverIntro)
	switch {
	case err != nil:
		return c, err
	case fs.NArg() > 0:
		return c, fmt.Errorf("unexpected arguments %q; see -help", fs.Args())
	}
	if err := c.chooseStore(given, getenv); err != nil {
		return c, err
	}
	for _, name := range []string{"read-header-timeout", "read-timeout", "write-timeout", "idle-timeout", "store-timeout"} {
		if d := fs.Lookup(name).Value.(flag.Getter).Get().(time.Duration); d <= 0 {
			return c, fmt.Errorf("-%s %v: want more than 0", name, d)
		}
	}
	minVersion, known := map[string]uint16{"1.2": tls.VersionTLS12, "1.3": tls.VersionTLS13}[c.tlsMinFlag]
	switch {
	case c.tlsCert != "" && c.tlsKey == "":
		return c, fmt.Errorf("a TLS certificate is given (%s) but no key: set -tls-key or %s too", c.tlsCert, tlsKeyVar)
	case c.tlsKey != "" && c.tlsCert == "":
		return c, fmt.Errorf("a TLS key is given (%s) but no certificate: set -tls-cert or %s too", c.tlsKey, tlsCertVar)
	case !known:
		return c, fmt.Errorf("-tls-min-version %q: want 1.2 or 1.3", c.tlsMinFlag)
	case c.tlsReloadInterval < 0:
		return c, fmt.Errorf("-tls-reload-interval %v: want 0 or more", c.tlsReloadInterval)
	case c.limits.storeTimeout >= c.limits.writeTimeout:
		return c, fmt.Errorf("-store-timeout %v is not below -write-timeout %v: a client would be cut off before it hears "+
			"that the store timed out; lower -store-timeout or raise -write-timeout", c.limits.storeTimeout, c.limits.writeTimeout)
	case c.limits.maxInFlight < 0:
		return c, fmt.Errorf("-max-in-flight %d: want 0 or more", c.limits.maxInFlight)
	}
	c.tlsMinVersion = minVersion
	c.tracing, err = tracingConfig(getenv)
	if err = cmp.Or(c.rates.check(), c.backups.check(c.store), err); err != nil {
		return c, err
	}
	c.keys, err = parseAPIKeys(getenv(apiKeysVar))
	return c, err
}

// run serves until ctx is done, then shuts down gracefully; or runs the
// subcommand that args name.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) > 0 && subcommands[args[0]] != nil {
		return subcommands[args[0]](ctx, args[1:], getenv, stdout, stderr)
	}
	c, err := parseConfig(args, getenv, stdout)
	if err != nil {
		return err
	}
	s := &server{c: c, logger: slog.New(slog.NewTextHandler(stderr, nil)), stdout: stdout}
	defer func() { closeAll(s.closers) }()
	for _, step := range []func(context.Context) error{s.open, s.buildHandler, s.listen} {
		if err := step(ctx); err != nil {
			return err
		}
	}
	return s.serve(ctx)
}

// closeAll calls closers, last first.
func closeAll(closers []func()) {
	for _, f := range slices.Backward(closers) {
		f()
	}
}

// server is what run holds while it serves; its steps append to closers
// what run closes, last first, when it returns.
type server struct {
	c       config
	logger  *slog.Logger
	stdout  io.Writer
	closers []func()

	certs *certSource // nil for plain HTTP
	store petstore.Store
	obs   *observability
	admin *admin // served with -admin-addr
	srv   *http.Server
	ln    net.Listener
}

// open checks the key pair and the handler's options, then opens the
// store, the key, the backups and the observability, in that order, and
// assembles the admin endpoints from them.
func (s *server) open(ctx context.Context) (err error) {
	c, logger := s.c, s.logger
	if c.tlsCert != "" {
		if s.certs, err = newCertSource(c.tlsCert, c.tlsKey, logger); err != nil {
			return err
		}
	}
	if err := petstore.CheckOptions(handlerOptions(c)...); err != nil {
		return err
	}
	var sqlite *sqlitestore.Store // nil for another store
	switch c.store {
	case storePostgres:
		pg, closePool, err := openPostgresStore(ctx, c.postgresURL, c.replicaURLs, c.postgresListenURL, c.migrate, logger)
		if err != nil {
			return err
		}
		s.store, s.closers = pg, append(s.closers, closePool)
	case storeMemory:
		logger.Info("petstore: storing pets in memory; they are lost when the process stops")
		s.store = memstore.New()
	default:
		if sqlite, err = sqlitestore.Open(c.dataFile, sqlitestore.WithLogger(logger)); err != nil {
			return fmt.Errorf("%w; -data or %s names another file, -store memory keeps pets in memory", err, dataFileVar)
		}
		logger.Info("petstore: storing pets in a SQLite file", "path", sqlite.Path())
		s.store, s.closers = sqlite, append(s.closers, func() {
			if err := sqlite.Close(); err != nil {
				logger.Error("petstore: closing the SQLite file", "path", sqlite.Path(), "err", err)
			}
		})
	}
	// Only now: a run that refuses to serve prints no key.
	if len(c.keys) == 0 {
		if s.c.keys, err = madeKey(s.store, s.stdout); err != nil {
			return err
		}
	}
	var backups *sqlitestore.Backups
	if b := c.backups; b.dir != "" && sqlite != nil {
		if backups, err = sqlite.ScheduleBackups(b.dir, b.interval, b.keep); err != nil {
			return fmt.Errorf("-backup-dir: %w", err)
		}
		s.closers = append(s.closers, backups.Stop)
	}
	collectors, replicas := replicaReports(s.store)
	collectors = append(collectors, dataMetrics(sqlite, backups)...)
	if s.obs, err = newObservability(ctx, c.adminAddr != "", c.tracing, c.accessLog, logger, collectors...); err != nil {
		return err
	}
	s.closers = append(s.closers, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.obs.close(ctx); err != nil {
			logger.Warn("petstore: shutting down telemetry", "err", err)
		}
	})
	s.admin = &admin{metrics: s.obs.metrics, store: s.store, replicas: replicas, logger: logger,
		redact: func(u string) string { return postgresRedact(u, c.postgresURL) }}
	if backups != nil && c.backups.ready {
		s.admin.backups = backupsReady(backups, c.backups.interval)
	}
	return nil
}

// buildHandler makes the API handler and the http.Server that serves it
// within the limits of the flags.
func (s *server) buildHandler(ctx context.Context) error {
	c, l := s.c, s.c.limits
	rateLimit, closeLimiters, err := c.rates.limiters(ctx, s.logger)
	if err != nil {
		return err
	}
	s.closers = append(s.closers, closeLimiters)
	rateLimit.MaxInFlight = l.maxInFlight
	// Closed on shutdown, to end the watch streams rather than hold Shutdown
	// until its timeout.
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
	s.srv = &http.Server{
		Handler:           s.obs.wrap(api), // answers a 401 with Connection: close
		ReadHeaderTimeout: l.readHeaderTimeout,
		ReadTimeout:       l.readTimeout,
		WriteTimeout:      l.writeTimeout,
		IdleTimeout:       l.idleTimeout,
		ErrorLog:          slog.NewLogLogger(s.logger.Handler(), slog.LevelWarn),
		// net/http allows 4096 bytes more: a head of 16 KiB is served, one
		// byte more refused.
		MaxHeaderBytes: 16<<10 - 4096,
		// What one HTTP/2 connection may make the server hold; a stream's
		// buffer holds the API's largest body.
		HTTP2: &http.HTTP2Config{
			MaxConcurrentStreams:          100,
			MaxReceiveBufferPerStream:     64 << 10,
			MaxReceiveBufferPerConnection: 256 << 10,
			MaxReadFrameSize:              16 << 10,
			MaxDecoderHeaderTableSize:     4 << 10,
			MaxEncoderHeaderTableSize:     4 << 10,
		},
		// OPTIONS * goes to the handler, which asks for a key.
		DisableGeneralOptionsHandler: true,
	}
	s.srv.RegisterOnShutdown(func() { close(endStreams) })
	if s.certs != nil {
		s.srv.TLSConfig = &tls.Config{MinVersion: c.tlsMinVersion, GetCertificate: s.certs.certificate}
	}
	return nil
}

// listen listens on the API's address and serves the admin endpoints.
func (s *server) listen(ctx context.Context) (err error) {
	c, logger := s.c, s.logger
	if s.ln, err = listenConfig.Listen(ctx, "tcp", c.addr); err != nil {
		return err
	}
	s.closers = append(s.closers, func() { s.ln.Close() })
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
		stopAdmin, err := serveAdmin(ctx, c.adminAddr, s.admin, s.stdout)
		if err != nil {
			return err
		}
		s.closers = append(s.closers, stopAdmin)
	}
	url := scheme + "://" + s.ln.Addr().String() + c.basePath
	logger.Info("petstore: listening", "url", url, "docs", url+wire.DocsPath, "max_in_flight", c.limits.maxInFlight,
		"store_timeout", c.limits.storeTimeout, "read_timeout", c.limits.readTimeout, "write_timeout", c.limits.writeTimeout,
		"read_limit", c.rates.reads.String(), "create_limit", c.rates.creates.String(), "limits_in", cmp.Or(redisRedact(c.rates.redisURL), "process"))
	fmt.Fprintf(s.stdout, "serving %s/pets\n", url)
	return nil
}

// serve serves until ctx is done, then shuts down within -shutdown-timeout.
func (s *server) serve(ctx context.Context) error {
	served := make(chan error, 1)
	go func() {
		if s.certs != nil {
			served <- s.srv.ServeTLS(s.ln, "", "")
		} else {
			served <- s.srv.Serve(s.ln)
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

// handlerOptions returns the options of the handler that c sets, the
// authenticator only when c has keys.
func handlerOptions(c config) []petstore.Option {
	opts := []petstore.Option{petstore.WithBasePath(c.basePath), petstore.WithStoreTimeout(c.limits.storeTimeout)}
	if len(c.keys) > 0 {
		opts = append(opts, petstore.WithAuthenticator(petstore.NamedAPIKeys(c.keys...)))
	}
	return opts
}

// sendBuffer is the kernel's send buffer of each API connection (Linux
// keeps twice as much). It bounds what a client that never reads makes the
// server encrypt and hold: unbounded, 100 such clients of the docs bundle
// cost 150 MB at once (docs/limits.md).
const sendBuffer = 64 << 10

// listenConfig makes the API's listener, whose connections inherit its sendBuffer.
var listenConfig = net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
	var err error
	cerr := c.Control(func(fd uintptr) {
		err = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_SNDBUF, sendBuffer)
	})
	return cmp.Or(cerr, err)
}}
