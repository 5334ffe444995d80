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
	"github.com/prometheus/client_golang/prometheus"
)

// migrateCommand brings the tables to the schema version this release
// needs; messages name it.
const migrateCommand = "petstore migrate"

// openPostgresStore returns a store on rawURL, reading from replicaURLs and
// listening at listenURL when set, and what closes it. With migrate it first
// migrates; either way it refuses tables or privileges that cannot serve.
func openPostgresStore(ctx context.Context, rawURL, replicaURLs, listenURL string, migrate bool,
	logger *slog.Logger) (_ *pgstore.Store, _ func(), err error) {
	var pools []*pgxpool.Pool // the replicas', then the primary's
	var closers []func()      // the pools', then the store's
	defer func() {
		if err != nil {
			closeAll(closers)
		}
	}()
	for i, u := range strings.Split(replicaURLs, ",") {
		if u = strings.TrimSpace(u); u == "" {
			continue
		}
		pool, cfg, err := openPool(ctx, u, fmt.Sprintf("URL %d of %s", i+1, replicaURLsVar), false)
		if err != nil {
			return nil, nil, err
		}
		pools, closers = append(pools, pool), append(closers, pool.Close)
		logger.Info("petstore: reading pets from a PostgreSQL replica", "host", cfg.ConnConfig.Host, "port", cfg.ConnConfig.Port,
			"database", cfg.ConnConfig.Database, "user", cfg.ConnConfig.User, "max_conns", cfg.MaxConns)
	}
	opts := []pgstore.Option{pgstore.WithReplicas(pools...)}
	if listenURL != "" {
		if _, err := parsePostgresURL(listenURL, "the URL to listen on (-postgres-listen or "+postgresListenURLVar+")"); err != nil {
			return nil, nil, err
		}
		opts = append(opts, pgstore.WithListenURL(listenURL))
	}
	pool, cfg, err := openPool(ctx, rawURL, "the PostgreSQL URL (-postgres or "+postgresURLVar+")", true)
	if err != nil {
		return nil, nil, err
	}
	closers = append(closers, pool.Close)
	store, err := pgstore.New(pool, opts...)
	if err != nil {
		return nil, nil, err
	}
	closers = append(closers, store.Close)
	if migrate {
		switch err := store.Migrate(ctx); {
		case errors.Is(err, pgstore.ErrNoSchema) || errors.Is(err, pgstore.ErrPrivilege):
			return nil, nil, errors.New(postgresMessage(err, rawURL))
		case err != nil:
			return nil, nil, fmt.Errorf("migrating the PostgreSQL database: %s; to migrate apart, as the tables' owner, run %s, "+
				"then serve with -migrate=false", postgresMessage(err, rawURL), migrateCommand)
		}
	}
	switch err := store.Check(ctx); {
	case errors.Is(err, sqlstore.ErrNoIDLeft):
		// Its pets can still be read and exported; /readyz says why.
		logger.Error("petstore: the store can create no more pets", "err", postgresMessage(err, rawURL))
	case errors.Is(err, pgstore.ErrNotMigrated):
		return nil, nil, fmt.Errorf("%s; with this database's URL, run %s as a role that may create tables", postgresMessage(err, rawURL), migrateCommand)
	case err != nil:
		return nil, nil, errors.New(postgresMessage(err, rawURL))
	}
	var schema string
	if err := pool.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		return nil, nil, fmt.Errorf("cannot reach PostgreSQL: %s", postgresMessage(err, rawURL))
	}
	logger.Info("petstore: storing pets in PostgreSQL", "host", cfg.ConnConfig.Host, "port", cfg.ConnConfig.Port,
		"database", cfg.ConnConfig.Database, "user", cfg.ConnConfig.User, "schema", schema, "table", pgstore.DefaultTable, "max_conns", cfg.MaxConns)
	return store, func() { closeAll(closers) }, nil
}

// postgresPasswords find the passwords in a connection string: in key=value
// form, quoted or not; and, even in a URL that does not parse, the text
// between "://user:" and the last "@".
var postgresPasswords = []*regexp.Regexp{
	regexp.MustCompile(`(?i)password\s*=\s*('(?:[^'\\]|\\.)*'|[^\s&]+)`),
	regexp.MustCompile(`(?s)://[^:]*:(.*)@`),
}

// postgresRedact replaces in msg every password that rawURL carries (user
// information, password and sslpassword parameters, key=value form), and
// every piece of three or more bytes of one, with "xxxxx": even for a
// string too malformed for pgx to mask.
func postgresRedact(msg, rawURL string) string {
	var secrets []string
	if u, err := url.Parse(rawURL); err == nil {
		p, _ := u.User.Password()
		for _, v := range append(append([]string{p}, u.Query()["password"]...), u.Query()["sslpassword"]...) {
			secrets = append(secrets, v, url.PathEscape(v), url.QueryEscape(v))
		}
	}
	for _, re := range postgresPasswords {
		for _, m := range re.FindAllStringSubmatch(rawURL, -1) {
			secrets = append(secrets, m[1], strings.Trim(m[1], "'"))
		}
	}
	// pgx may split a password at '@', '/' or ':' and show the pieces;
	// mask them too, longest first.
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

// runMigrate is petstore migrate.
func runMigrate(ctx context.Context, args []string, getenv func(string) string, stdout, _ io.Writer) error {
	c, _, err := subcommand(flag.NewFlagSet(migrateCommand, flag.ContinueOnError), args, getenv, stdout, migrateCommand+" [-postgres URL]",
		"Creates or upgrades the PostgreSQL tables to the schema version this release needs, says what it did and exits.\n"+
			"Run it as the tables' owner; then serve with -migrate=false as a role that holds only the grants in docs/postgres.md.", 0, 0, "postgres")
	if err != nil {
		return err
	}
	url := c.postgresURL
	if url == "" {
		return fmt.Errorf("%s needs the database's URL in %s or -postgres; the SQLite file is migrated by the server when it opens it",
			migrateCommand, postgresURLVar)
	}
	pool, cfg, err := openPool(ctx, url, "the PostgreSQL URL (-postgres or "+postgresURLVar+")", true)
	if err != nil {
		return err
	}
	defer pool.Close()
	store, err := pgstore.New(pool)
	if err != nil {
		return err
	}
	before, _, err := store.SchemaVersion(ctx)
	if err != nil {
		before = -1 // unknown: the role may not read the versions
	}
	if err := store.Migrate(ctx); err != nil {
		return fmt.Errorf("migrating the PostgreSQL database: %s", postgresMessage(err, url))
	}
	after, _, err := store.SchemaVersion(ctx)
	if err != nil {
		return errors.New(postgresMessage(err, url))
	}
	where := fmt.Sprintf("%s in the database %s on %s", store.Table(), cfg.ConnConfig.Database, cfg.ConnConfig.Host)
	switch {
	case before == after:
		fmt.Fprintf(stdout, "%s: at schema version %d, the version this release needs: nothing to do\n", where, after)
	case before < 0:
		fmt.Fprintf(stdout, "%s: migrated to schema version %d\n", where, after)
	default:
		fmt.Fprintf(stdout, "%s: migrated from schema version %d to %d\n", where, before, after)
	}
	return nil
}

// openPool opens a pool on url, which what names in errors; each attempt to
// connect is bounded by 5 s unless the URL sets connect_timeout. With ping it
// connects once, so that an unreachable server stops the start. Its errors
// never show the password.
func openPool(ctx context.Context, url, what string, ping bool) (*pgxpool.Pool, *pgxpool.Config, error) {
	cfg, err := parsePostgresURL(url, what)
	if err != nil {
		return nil, nil, err
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = 5 * time.Second
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("opening the pool of %s: %s", what, postgresRedact(err.Error(), url))
	}
	if !ping {
		return pool, cfg, nil
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		msg := postgresMessage(err, url)
		if pgErr := (*pgconn.PgError)(nil); errors.As(err, &pgErr) && pgErr.Code == "3D000" { // invalid_catalog_name
			msg += postgresRedact(fmt.Sprintf("; create it, as a role that may create databases, with CREATE DATABASE %s; "+
				"or name another database in the URL", pgx.Identifier{cfg.ConnConfig.Database}.Sanitize()), url)
		}
		return nil, nil, fmt.Errorf("cannot reach PostgreSQL: %s", msg)
	}
	return pool, cfg, nil
}

// parsePostgresURL parses url, which what names in errors; its errors never
// show the password.
func parsePostgresURL(url, what string) (*pgxpool.Config, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		// Only why, without the string, whose password pgx may fail to mask.
		reason := err.Error()
		if pe := (*pgconn.ParseConfigError)(nil); errors.As(err, &pe) {
			reason = "cannot parse it"
			if i := strings.LastIndex(pe.Error(), "`: "); i >= 0 { // "cannot parse `string`: reason"
				reason = pe.Error()[i+len("`: "):]
			}
		}
		return nil, fmt.Errorf("%s is not valid: %s; the form is postgres://user:password@host:5432/database?sslmode=require",
			what, postgresRedact(reason, url))
	}
	return cfg, nil
}

// postgresMessage returns err's message without the password of rawURL, nor
// the words of petstore.ErrUnavailable, which at start-up would blame the server.
func postgresMessage(err error, rawURL string) string {
	return postgresRedact(strings.Replace(err.Error(), petstore.ErrUnavailable.Error()+": ", "", 1), rawURL)
}

// replicaProbe is what /readyz says of a replica.
type replicaProbe struct {
	Name       string  `json:"name"`
	Serving    bool    `json:"serving"`
	LagSeconds float64 `json:"lag_seconds"`
	Reason     string  `json:"reason,omitempty"` // why it does not serve
}

// replicaReports returns what /metrics and /readyz report of store's
// replicas (the collectors of its reads, their state), or nil for none.
func replicaReports(store petstore.Store) ([]prometheus.Collector, func() []replicaProbe) {
	s, ok := store.(*pgstore.Store)
	if !ok || len(s.ReadStats().Replicas) == 0 {
		return nil, nil
	}
	const reads = "Reads of pets (Get and List) by where they were served: replica, primary (no replica could serve), " +
		"or fallback (tried on a replica, served by the primary)."
	servedBy := func(where string, n func(pgstore.ReadStats) int64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "petstore_store_reads_total", Help: reads,
			ConstLabels: prometheus.Labels{"served_by": where}}, func() float64 { return float64(n(s.ReadStats())) })
	}
	collectors := []prometheus.Collector{
		servedBy("replica", func(st pgstore.ReadStats) int64 { return st.Replica }),
		servedBy("primary", func(st pgstore.ReadStats) int64 { return st.Primary }),
		servedBy("fallback", func(st pgstore.ReadStats) int64 { return st.Fallback }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "petstore_replica_waits_total",
			Help: "Reads that waited for a replica to replay this instance's last created pet."},
			func() float64 { return float64(s.ReadStats().Waits) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "petstore_replica_wait_seconds_total",
			Help: "Time that reads waited for a replica to replay this instance's last created pet."},
			func() float64 { return s.ReadStats().WaitTime.Seconds() }),
	}
	for i, r := range s.ReadStats().Replicas { // a Store's replicas are fixed when it is made
		replica := prometheus.Labels{"replica": r.Name}
		collectors = append(collectors,
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "petstore_replica_lag_seconds", ConstLabels: replica,
				Help: "How far the replica lags behind the primary: it has replayed every commit older than this, as of its last check."},
				func() float64 { return s.ReadStats().Replicas[i].Lag.Seconds() }),
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "petstore_replica_serving", ConstLabels: replica,
				Help: "1 when reads go to the replica, 0 when it is skipped (unreachable, promoted, or lagging past the bound)."},
				func() float64 {
					if s.ReadStats().Replicas[i].Serving {
						return 1
					}
					return 0
				}))
	}
	return collectors, func() []replicaProbe {
		var probes []replicaProbe
		for _, r := range s.ReadStats().Replicas {
			p := replicaProbe{Name: r.Name, Serving: r.Serving, LagSeconds: r.Lag.Seconds()}
			switch {
			case r.Err != nil:
				p.Reason = r.Err.Error()
			case !r.Serving:
				p.Reason = "it lags too far behind the primary, or a read on it failed since its last check"
			}
			probes = append(probes, p)
		}
		return probes
	}
}
