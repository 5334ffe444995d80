package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/pgstore"
)

// postgresURLVar names the environment variable that, like -postgres,
// selects PostgreSQL.
const postgresURLVar = "PETSTORE_POSTGRES_URL"

// postgresConnectTimeout bounds each attempt to connect to PostgreSQL when
// the URL does not set connect_timeout, so that a database that does not
// answer gives 503 rather than requests that hang.
const postgresConnectTimeout = 5 * time.Second

// openPostgres opens a pool on the PostgreSQL server at rawURL, creates or
// upgrades the pets table, and returns a store on it and a function that
// closes the pool. Neither its errors nor its log show the URL's password.
func openPostgres(ctx context.Context, rawURL string, logger *slog.Logger) (petstore.Store, func(), error) {
	cfg, err := pgxpool.ParseConfig(rawURL)
	if err != nil {
		return nil, nil, fmt.Errorf("the PostgreSQL URL (-postgres or %s) is not valid: %s; "+
			"the form is postgres://user:password@host:5432/database?sslmode=require",
			postgresURLVar, postgresRedact(postgresParseReason(err), rawURL))
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = postgresConnectTimeout
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("opening the PostgreSQL pool: %s", postgresRedact(err.Error(), rawURL))
	}
	store, err := pgstore.New(pool)
	if err != nil {
		pool.Close()
		return nil, nil, err
	}
	schema, err := postgresCurrentSchema(ctx, pool)
	if err != nil {
		pool.Close()
		return nil, nil, errors.New(postgresRedact(err.Error(), rawURL))
	}
	if err := store.Migrate(ctx); err != nil {
		pool.Close()
		return nil, nil, fmt.Errorf("migrating the PostgreSQL database: %s", postgresRedact(withoutUnavailable(err), rawURL))
	}
	logger.Info("petstore: storing pets in PostgreSQL",
		"host", cfg.ConnConfig.Host,
		"port", cfg.ConnConfig.Port,
		"database", cfg.ConnConfig.Database,
		"user", cfg.ConnConfig.User,
		"schema", schema,
		"table", store.Table(),
		"max_conns", cfg.MaxConns,
	)
	return store, pool.Close, nil
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
