// Command petstore serves the animal store API on its own.
//
// Usage:
//
//	petstore [-addr localhost:8080] [-base-path /v1] [-postgres URL]
//
// API keys come from PETSTORE_API_KEYS, separated by commas. When it is
// empty, petstore makes a random key and prints it once on start, so that
// the first run needs no setup.
//
// Pets are kept in memory unless -postgres or PETSTORE_POSTGRES_URL gives
// the URL of a PostgreSQL database, such as
// postgres://user:password@host:5432/database. Then petstore creates or
// upgrades its table on start (several instances may start at once) and
// keeps pets there, so that any number of instances can serve one
// catalogue. The flag wins over the variable; prefer the variable, as a
// flag's value, password included, is visible to other users of the host.
//
// The server logs with log/slog to standard error, prints the URL it
// listens on, cuts off slow or oversized requests with its timeouts and
// header limit, and on SIGINT or SIGTERM stops accepting connections and
// finishes the requests in flight before it exits.
package main

import (
	"context"
	"crypto/rand"
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
	"strings"
	"syscall"
	"time"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/memstore"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "petstore:", err)
		}
		os.Exit(2)
	}
}

// config is what the flags and the environment set.
type config struct {
	addr              string
	basePath          string
	keys              []string
	postgresURL       string
	readHeaderTimeout time.Duration
	shutdownTimeout   time.Duration
}

func parseConfig(args []string, getenv func(string) string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("petstore", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.addr, "addr", "localhost:8080", "`address` to listen on; port 0 picks a free port")
	fs.StringVar(&c.basePath, "base-path", petstore.DefaultBasePath, "`path` under which the API is served")
	fs.DurationVar(&c.readHeaderTimeout, "read-header-timeout", 5*time.Second, "how long a client may take to send the request headers")
	fs.DurationVar(&c.shutdownTimeout, "shutdown-timeout", 30*time.Second, "how long requests in flight may take to finish on shutdown")
	fs.StringVar(&c.postgresURL, "postgres", "", "PostgreSQL `URL` to keep pets in, instead of memory (default $"+postgresURLVar+")")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments %q; see -help", fs.Args())
	}
	if c.postgresURL == "" {
		c.postgresURL = getenv(postgresURLVar)
	}
	for _, k := range strings.Split(getenv("PETSTORE_API_KEYS"), ",") {
		if k = strings.TrimSpace(k); k != "" {
			c.keys = append(c.keys, k)
		}
	}
	return c, nil
}

// run serves until ctx is done, then shuts down gracefully.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	c, err := parseConfig(args, getenv, stderr)
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(stderr, nil))

	if len(c.keys) == 0 {
		key, err := randomKey()
		if err != nil {
			return err
		}
		c.keys = []string{key}
		fmt.Fprintf(stdout, "PETSTORE_API_KEYS is not set; this run accepts the API key %s\n", key)
	}

	store, closeStore, err := openStore(ctx, c, logger)
	if err != nil {
		return err
	}
	defer closeStore()

	api, err := petstore.New(
		petstore.WithStore(store),
		petstore.WithAuthenticator(petstore.APIKeys(c.keys...)),
		petstore.WithBasePath(c.basePath),
		petstore.WithLogger(logger),
	)
	if err != nil {
		return err
	}

	ln, err := net.Listen("tcp", c.addr)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           api,
		ReadHeaderTimeout: c.readHeaderTimeout,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    16 << 10,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	url := "http://" + ln.Addr().String() + c.basePath
	logger.Info("petstore: listening", "url", url)
	fmt.Fprintf(stdout, "serving %s/pets\n", url)

	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
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

// openStore opens the store that the configuration selects: pgstore when a
// PostgreSQL URL is set, memstore otherwise. The returned function releases
// it.
func openStore(ctx context.Context, c config, logger *slog.Logger) (petstore.Store, func(), error) {
	if c.postgresURL != "" {
		return openPostgres(ctx, c.postgresURL, logger)
	}
	logger.Info("petstore: storing pets in memory; they are lost when the process stops")
	return memstore.New(), func() {}, nil
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
