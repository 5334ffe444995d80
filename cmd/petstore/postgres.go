package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/internal/sqlstore"
	"github.com/petstore-go/petstore/pgstore"
)

// postgresURLVar names the environment variable that, like -postgres,
// selects PostgreSQL.
const postgresURLVar = "PETSTORE_POSTGRES_URL"

// postgresListenURLVar names the variable of -postgres-listen.
const postgresListenURLVar = "PETSTORE_POSTGRES_LISTEN_URL"

// postgresConnectTimeout bounds each attempt to connect to PostgreSQL when
// the URL does not set connect_timeout, so that a database that does not
// answer gives 503 rather than requests that hang.
const postgresConnectTimeout = 5 * time.Second

// migrateCommand is the command that brings the tables to the schema
// version this release needs, for the messages that name it.
const migrateCommand = "petstore migrate"

// openPostgresStore opens a pool on the PostgreSQL server at rawURL and
// returns a store on it and a function that closes the pool. With migrate,
// it first creates or upgrades the tables (which changes nothing when they
// are current); either way it checks, with (*pgstore.Store).Check, that
// they are at the version needed and that the role holds every privilege
// that serving needs, and refuses to go on otherwise, saying which command
// or GRANT fixes it. Neither its errors nor its log show the URL's
// password. The store reads from the hot standbys at the comma-separated
// replicaURLs, if any, and listens for other instances' pets at listenURL,
// or at rawURL when it is "".
func openPostgresStore(ctx context.Context, rawURL, replicaURLs, listenURL string, migrate bool, logger *slog.Logger) (*pgstore.Store, func(), error) {
	replicas, closeReplicas, err := openReplicas(ctx, replicaURLs, logger)
	if err != nil {
		return nil, nil, err
	}
	opts := []pgstore.Option{pgstore.WithReplicas(replicas...)}
	if listenURL != "" {
		opts = append(opts, pgstore.WithListenURL(listenURL))
	}
	store, pool, cfg, err := postgresPool(ctx, rawURL, opts...)
	if err != nil {
		closeReplicas()
		return nil, nil, err
	}
	closePool := func() {
		store.Close()
		pool.Close()
		closeReplicas()
	}
	if migrate {
		if err := store.Migrate(ctx); err != nil {
			closePool()
			if errors.Is(err, pgstore.ErrNoSchema) || errors.Is(err, pgstore.ErrPrivilege) {
				return nil, nil, errors.New(postgresRedact(err.Error(), rawURL))
			}
			return nil, nil, fmt.Errorf("migrating the PostgreSQL database: %s; "+
				"to migrate apart, as the tables' owner, run %s, then serve with -migrate=false",
				postgresRedact(withoutUnavailable(err), rawURL), migrateCommand)
		}
	}
	if err := store.Check(ctx); errors.Is(err, sqlstore.ErrNoIDLeft) {
		// Its pets can still be read and exported; /readyz says why.
		logger.Error("petstore: the store can create no more pets", "err", postgresRedact(err.Error(), rawURL))
	} else if err != nil {
		closePool()
		msg := postgresRedact(withoutUnavailable(err), rawURL)
		if errors.Is(err, pgstore.ErrNotMigrated) {
			msg += fmt.Sprintf("; with this database's URL, run %s as a role that may create tables", migrateCommand)
		}
		return nil, nil, errors.New(msg)
	}
	var schema string
	if err := pool.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		closePool()
		return nil, nil, fmt.Errorf("cannot reach PostgreSQL: %s", postgresRedact(withoutUnavailable(err), rawURL))
	}
	logger.Info("petstore: storing pets in PostgreSQL",
		"host", cfg.ConnConfig.Host,
		"port", cfg.ConnConfig.Port,
		"database", cfg.ConnConfig.Database,
		"user", cfg.ConnConfig.User,
		"schema", schema,
		"table", pgstore.DefaultTable,
		"max_conns", cfg.MaxConns,
	)
	return store, closePool, nil
}

// postgresPool opens a pool on the PostgreSQL server at rawURL and a store
// on it, and connects once, so that an unreachable server stops the start.
func postgresPool(ctx context.Context, rawURL string, opts ...pgstore.Option) (*pgstore.Store, *pgxpool.Pool, *pgxpool.Config, error) {
	cfg, err := pgxpool.ParseConfig(rawURL)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("the PostgreSQL URL (-postgres or %s) is not valid: %s; "+
			"the form is postgres://user:password@host:5432/database?sslmode=require",
			postgresURLVar, postgresRedact(postgresParseReason(err), rawURL))
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = postgresConnectTimeout
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("opening the PostgreSQL pool: %s", postgresRedact(err.Error(), rawURL))
	}
	store, err := pgstore.New(pool, opts...)
	if err != nil {
		pool.Close()
		return nil, nil, nil, err
	}
	if err := pool.Ping(ctx); err != nil {
		store.Close()
		pool.Close()
		msg := withoutUnavailable(err)
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "3D000" { // invalid_catalog_name
			msg += fmt.Sprintf("; create it, as a role that may create databases, with CREATE DATABASE %s; or name another database in the URL",
				pgx.Identifier{cfg.ConnConfig.Database}.Sanitize())
		}
		return nil, nil, nil, fmt.Errorf("cannot reach PostgreSQL: %s", postgresRedact(msg, rawURL))
	}
	return store, pool, cfg, nil
}

// migratePostgres brings the tables of the PostgreSQL database at rawURL
// to the schema version this release needs and writes to out what it did.
func migratePostgres(ctx context.Context, rawURL string, out io.Writer) error {
	store, pool, cfg, err := postgresPool(ctx, rawURL)
	if err != nil {
		return err
	}
	defer pool.Close()
	before, _, err := store.SchemaVersion(ctx)
	if err != nil {
		before = -1 // unknown: the role may not read the versions
	}
	if err := store.Migrate(ctx); err != nil {
		return fmt.Errorf("migrating the PostgreSQL database: %s", postgresRedact(withoutUnavailable(err), rawURL))
	}
	after, _, err := store.SchemaVersion(ctx)
	if err != nil {
		return errors.New(postgresRedact(withoutUnavailable(err), rawURL))
	}
	where := fmt.Sprintf("%s in the database %s on %s", store.Table(), cfg.ConnConfig.Database, cfg.ConnConfig.Host)
	switch {
	case before == after:
		fmt.Fprintf(out, "%s: at schema version %d, the version this release needs: nothing to do\n", where, after)
	case before < 0:
		fmt.Fprintf(out, "%s: migrated to schema version %d\n", where, after)
	default:
		fmt.Fprintf(out, "%s: migrated from schema version %d to %d\n", where, before, after)
	}
	return nil
}

// postgresParseReason returns why pgx could not parse a connection string,
// without the string: pgx masks the password in it, but a string malformed
// enough can hide where the password ends.
func postgresParseReason(err error) string {
	var parseErr *pgconn.ParseConfigError
	if !errors.As(err, &parseErr) {
		return err.Error()
	}
	msg := parseErr.Error()
	if i := strings.LastIndex(msg, "`: "); i >= 0 {
		return msg[i+len("`: "):]
	}
	return "cannot parse it"
}

// postgresPasswordParam finds the value of a password in a connection
// string in key=value form, quoted or not.
var postgresPasswordParam = regexp.MustCompile(`(?i)password\s*=\s*('(?:[^'\\]|\\.)*'|[^\s&]+)`)

// postgresRedact replaces in msg every password that rawURL carries, in
// the user information of a URL, in its password and sslpassword query
// parameters, or in key=value form, and every piece of three or more bytes
// of them, with "xxxxx". pgx already masks passwords in its messages; this
// makes sure, even for a connection string too malformed for pgx to find
// where its password ends.
func postgresRedact(msg, rawURL string) string {
	var secrets []string
	if u, err := url.Parse(rawURL); err == nil {
		if p, ok := u.User.Password(); ok {
			secrets = append(secrets, p, url.PathEscape(p), url.QueryEscape(p))
		}
		for _, key := range []string{"password", "sslpassword"} {
			for _, v := range u.Query()[key] {
				secrets = append(secrets, v, url.QueryEscape(v))
			}
		}
	}
	// The text between "://user:" and the last "@", for a URL that does not
	// parse.
	if _, rest, ok := strings.Cut(rawURL, "://"); ok {
		if at := strings.LastIndex(rest, "@"); at >= 0 {
			if _, p, ok := strings.Cut(rest[:at], ":"); ok {
				secrets = append(secrets, p)
			}
		}
	}
	for _, m := range postgresPasswordParam.FindAllStringSubmatch(rawURL, -1) {
		secrets = append(secrets, m[1], strings.Trim(m[1], "'"))
	}
	// A password with an unescaped '@', '/' or ':' may be split by pgx in
	// other places than here, and its pieces shown as a host name, a port
	// or a database: mask the pieces too. Longest first, so that a piece
	// inside a longer secret does not break it up before it is masked.
	for _, s := range secrets {
		secrets = append(secrets, strings.FieldsFunc(s, func(r rune) bool { return r == '@' || r == '/' || r == ':' })...)
	}
	slices.SortFunc(secrets, func(a, b string) int { return len(b) - len(a) })
	for _, s := range secrets {
		if len(s) >= 3 {
			msg = strings.ReplaceAll(msg, s, "xxxxx")
		}
	}
	return msg
}

// runMigrate is the subcommand migrate: it brings the PostgreSQL tables to
// the schema version that this release needs, writes what it did to
// stdout, and returns, so that an operator can migrate as the tables'
// owner and serve, with -migrate=false, as a role that may not create
// tables. It takes -postgres, or reads PETSTORE_POSTGRES_URL.
func runMigrate(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	var c config
	intro := "Usage: " + migrateCommand + " [-postgres URL]\n\n" +
		"Creates or upgrades the PostgreSQL tables to the schema version this release needs, says what it did and exits.\n" +
		"Run it as the tables' owner; then serve with -migrate=false as a role that holds only the grants in docs/postgres.md.\n"
	fs := flag.NewFlagSet("petstore migrate", flag.ContinueOnError)
	if _, err := parseSettings(fs, slices.DeleteFunc(c.settings(), func(s setting) bool { return s.name != "postgres" }), args, getenv, stdout, intro); err != nil {
		return err
	}
	url := c.postgresURL
	if url == "" {
		return fmt.Errorf("%s needs the database's URL in %s or -postgres; the SQLite file is migrated by the server when it opens it",
			migrateCommand, postgresURLVar)
	}
	return migratePostgres(ctx, url, stdout)
}

// withoutUnavailable returns err's message without the words of
// petstore.ErrUnavailable, which a store adds so that the handler answers
// 503: at start-up they would read as if the server, not the database, were
// at fault.
func withoutUnavailable(err error) string {
	return strings.Replace(err.Error(), petstore.ErrUnavailable.Error()+": ", "", 1)
}
