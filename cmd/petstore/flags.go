package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/redislimit"
	"github.com/redis/go-redis/v9"
)

// The variables of the flags, and those without a flag.
const (
	dataFileVar          = "PETSTORE_DATA"
	postgresURLVar       = "PETSTORE_POSTGRES_URL"
	postgresListenURLVar = "PETSTORE_POSTGRES_LISTEN_URL"
	adminAddrVar         = "PETSTORE_ADMIN_ADDR"
	backupDirVar         = "PETSTORE_BACKUP_DIR"
	backupIntervalVar    = "PETSTORE_BACKUP_INTERVAL"
	backupKeepVar        = "PETSTORE_BACKUP_KEEP"
	tlsCertVar           = "PETSTORE_TLS_CERT"
	tlsKeyVar            = "PETSTORE_TLS_KEY"
	readLimitVar         = "PETSTORE_READ_LIMIT"
	createLimitVar       = "PETSTORE_CREATE_LIMIT"
	redisURLVar          = "PETSTORE_REDIS_URL"
	apiKeysVar           = "PETSTORE_API_KEYS"
	replicaURLsVar       = "PETSTORE_POSTGRES_REPLICA_URLS" // hot standbys to read from, separated by commas
)

// setting is one flag: its name, its variable ("" for none), where its value
// goes (*string, *bool, *int, *time.Duration or flag.Value), default and help.
type setting struct {
	name, env string
	to, def   any
	usage     string
}

// settings is the table of the server's flags, writing into c.
func (c *config) settings() []setting {
	return []setting{
		{"addr", "", &c.addr, "localhost:8080", "`address` to listen on; port 0 picks a free port"},
		{"base-path", "", &c.basePath, petstore.DefaultBasePath, "`path` under which the API is served"},
		{"store", "", (*string)(&c.store), "", "`kind` of store to keep pets in: sqlite (the default: a data file), memory (lost on exit) or postgres"},
		{"data", dataFileVar, &c.dataFile, "", "SQLite `file` to keep pets in; " + defaultDataFile + " in the working directory when no store is named"},
		{"postgres", postgresURLVar, &c.postgresURL, "", "PostgreSQL `URL` to keep pets in, instead of a data file; prefer the variable, which other users of the host cannot see"},
		{"postgres-listen", postgresListenURLVar, &c.postgresListenURL, "", "PostgreSQL `URL` to hear other instances' new pets on (LISTEN), when -postgres goes through a pooler in transaction mode, which does not carry LISTEN: " +
			"the server's own URL, or a pool in session mode; by default -postgres"},
		{"migrate", "", &c.migrate, true, "create or upgrade the PostgreSQL tables on start (nothing is changed when they are current); " +
			"with -migrate=false, run '" + migrateCommand + "' first, as the tables' owner, and serve as a role without the right to create"},
		{"tls-cert", tlsCertVar, &c.tlsCert, "", "PEM `file` of the certificate chain to serve HTTPS with, leaf first; needs -tls-key"},
		{"tls-key", tlsKeyVar, &c.tlsKey, "", "PEM `file` of the private key of -tls-cert"},
		{"tls-min-version", "", &c.tlsMinFlag, "1.2", "lowest TLS `version` to accept: 1.2 or 1.3"},
		{"tls-reload-interval", "", &c.tlsReloadInterval, 10 * time.Second, "how often to check the TLS files for a new key pair; 0 checks only on SIGHUP"},
		{"read-header-timeout", "", &c.limits.readHeaderTimeout, 5 * time.Second, "how long a client may take to send the request headers"},
		{"read-timeout", "", &c.limits.readTimeout, 30 * time.Second, "how long a client may take to send a request, its head and body"},
		{"write-timeout", "", &c.limits.writeTimeout, 30 * time.Second, "how long the server may take to read a request's body and write its response"},
		{"idle-timeout", "", &c.limits.idleTimeout, 2 * time.Minute, "how long a connection may stay open between requests"},
		{"store-timeout", "", &c.limits.storeTimeout, 5 * time.Second, "how long a request's call to the store may take before it is answered 503; must be below -write-timeout"},
		{"max-in-flight", "", &c.limits.maxInFlight, 64, "most `requests` that one caller (API key's name) may have in flight at once; more are answered 429; 0 for no cap"},
		{"read-limit", readLimitVar, &c.rates.reads, "200,400", "budget of each caller (API key's name) for listPets and getPet: `RATE,BURST`, requests a second and at once, " +
			"or off; over it, 429 with Retry-After"},
		{"create-limit", createLimitVar, &c.rates.creates, "50,100", "budget of each caller for createPet: `RATE,BURST` as for -read-limit"},
		{"limit-pause", "", &c.rates.pause, time.Second, "how long a 429 of a caller over its budget or -max-in-flight is held, at random between half and one and a half times this, " +
			"so that one caller's flood costs one answer per connection per pause; 0 answers at once"},
		{"redis", redisURLVar, &c.rates.redisURL, "", "Redis `URL` to keep the budgets in, shared by every instance that uses it; empty keeps them in the process"},
		{"rate-limit-fail-open", "", &c.rates.failOpen, false, "serve requests when Redis cannot be reached, rather than answer 503"},
		{"watch-max-streams", "", &c.watchStreams, petstore.DefaultMaxStreams, "watch streams (GET /pets as text/event-stream) open at once; more are answered 429"},
		{"watch-max-per-caller", "", &c.watchPerCaller, petstore.DefaultMaxStreamsPerPrincipal, "watch streams that one caller may hold open at once; more are answered 429"},
		{"shutdown-timeout", "", &c.shutdownTimeout, 30 * time.Second, "how long requests in flight may take to finish on shutdown"},
		{"admin-addr", adminAddrVar, &c.adminAddr, "", "`address` to serve /metrics, /healthz and /readyz on, apart from the API; empty for none"},
		{"access-log", "", &c.accessLog, false, "log a line per request"},
		{"backup-dir", backupDirVar, &c.backups.dir, "", "`directory` to back the SQLite file up to, every -backup-interval; empty for no scheduled backups"},
		{"backup-interval", backupIntervalVar, &c.backups.interval, time.Hour, "how often to back up to -backup-dir"},
		{"backup-keep", backupKeepVar, &c.backups.keep, 24, "how many backups to keep in -backup-dir; older ones are removed"},
		{"backup-ready", "", &c.backups.ready, false, "make /readyz answer 503 when no scheduled backup has succeeded for twice -backup-interval"},
	}
}

// limitFlags holds the flags that bound what a client can hold.
type limitFlags struct {
	readHeaderTimeout, readTimeout, writeTimeout, idleTimeout, storeTimeout time.Duration
	maxInFlight                                                             int
}

// removedFlags are the flags of earlier versions, with what does their job.
var removedFlags = map[string]string{
	"max-conns":    "the open-file limit (ulimit -n) bounds the connections, and a proxy in front bounds them per client address (docs/operating.md)",
	"max-bodies":   "-read-timeout bounds how long a body may take, and a proxy in front buffers bodies (docs/operating.md)",
	"max-share":    "-max-in-flight caps one caller's requests in flight",
	"body-timeout": "-read-timeout bounds how long a request's head and body may take",
}

// parseSettings registers table in fs and applies the variables before it
// parses args, so that a flag given wins over its variable even when empty.
// It returns the names of the flags given, or flag.ErrHelp after the help;
// the arguments after the flags are fs's.
func parseSettings(fs *flag.FlagSet, table []setting, args []string, getenv func(string) string, help io.Writer, intro string) (map[string]bool, error) {
	for _, s := range table {
		usage := s.usage
		if s.env != "" {
			usage += "; $" + s.env + " sets it too"
		}
		switch p := s.to.(type) {
		case *string:
			fs.StringVar(p, s.name, s.def.(string), usage)
		case *bool:
			fs.BoolVar(p, s.name, s.def.(bool), usage)
		case *int:
			fs.IntVar(p, s.name, s.def.(int), usage)
		case *time.Duration:
			fs.DurationVar(p, s.name, s.def.(time.Duration), usage)
		case flag.Value:
			if err := p.Set(s.def.(string)); err != nil {
				panic(err) // a default in the table that its own type refuses
			}
			fs.Var(p, s.name, usage)
		}
		if v := getenv(s.env); s.env != "" && v != "" {
			if err := fs.Lookup(s.name).Value.Set(v); err != nil {
				return nil, fmt.Errorf("%s=%s: %v", s.env, v, err)
			}
		}
	}
	fs.SetOutput(io.Discard) // Parse's usage on an error or -help
	err := fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprint(help, intro+"\nFlags:\n")
		fs.SetOutput(help)
		fs.PrintDefaults()
		if fs.Lookup("addr") != nil {
			fmt.Fprint(help, environmentHelp)
			for _, s := range table {
				if s.env != "" {
					fmt.Fprintf(help, "  %s\n    \tas -%s (the flag wins, even when empty)\n", s.env, s.name)
				}
			}
		}
		return nil, err
	case err != nil:
		name, _ := strings.CutPrefix(err.Error(), "flag provided but not defined: -")
		if instead, removed := removedFlags[name]; removed {
			return nil, fmt.Errorf("-%s is gone: %s", name, instead)
		}
		return nil, fmt.Errorf("%v; see -help", err)
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	return given, nil
}

// parseAPIKeys returns the keys of value, KEY or NAME:KEY separated by
// commas, trimmed; a KEY alone has no principal, so that
// petstore.NamedAPIKeys names it by its fingerprint. Its errors never show a key.
func parseAPIKeys(value string) ([]petstore.APIKey, error) {
	var keys []petstore.APIKey
	for i, entry := range strings.Split(value, ",") {
		k := petstore.APIKey{Key: strings.TrimSpace(entry)}
		if name, key, named := strings.Cut(k.Key, ":"); named {
			k = petstore.APIKey{Principal: strings.TrimSpace(name), Key: strings.TrimSpace(key)}
			switch {
			case k.Principal == "":
				return nil, fmt.Errorf("%s: entry %d has no name before its \":\"; write NAME:KEY, "+
					"or the key alone to have it named by its fingerprint", apiKeysVar, i+1)
			case k.Key == "":
				return nil, fmt.Errorf("%s: entry %d (%s:) has no key after its \":\"; write NAME:KEY", apiKeysVar, i+1, k.Principal)
			}
		}
		if k.Key != "" {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 && value != "" {
		return nil, fmt.Errorf("%s is set but holds no usable key, only commas and spaces; "+
			"give keys separated by commas, or leave it empty to have a key made and kept", apiKeysVar)
	}
	return keys, nil
}

// environmentHelp is the part of -help about the variables without a flag.
const environmentHelp = `
Environment:
  ` + apiKeysVar + `
    	API keys, KEY or NAME:KEY, separated by commas, that clients send as "Authorization: Bearer KEY";
    	the keys of one NAME share idempotency keys across a rotation, and a KEY alone is named by its fingerprint;
    	unset or empty, petstore makes a key on its first start, keeps it beside the data file (petstore.db.key) and prints it
  ` + replicaURLsVar + `
    	URLs of hot standbys of the PostgreSQL database, separated by commas, that serve reads (docs/replicas.md)
  ` + otlpEndpointVar + `, ` + otlpTracesEndpointVar + `, ` + otlpProtocolVar + `, ` + otlpTracesProtocolVar + `,
  ` + otelSDKDisabledVar + `, ` + otelTracesExporterVar + `, OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES, OTEL_TRACES_SAMPLER,
  OTEL_EXPORTER_OTLP_HEADERS, OTEL_EXPORTER_OTLP_TIMEOUT, OTEL_EXPORTER_OTLP_COMPRESSION, OTEL_EXPORTER_OTLP_CERTIFICATE
    	as OpenTelemetry defines them (docs/telemetry.md): with an endpoint, a span per request goes to that
    	OTLP collector over HTTP, port 4318 (http/protobuf: grpc is refused); without one, nothing is traced
`

// serverIntro is the start of the server's -help.
const serverIntro = "Usage: petstore [flags]\n       " + migrateCommand + " [-postgres URL]\n" +
	"       petstore backup|restore|export|import ... (each with -help)\n\n" +
	"Serves the animal store API over HTTP or HTTPS; " + migrateCommand + " creates or upgrades the PostgreSQL tables and exits; " +
	"backup and restore copy the SQLite file, export and import move pets and keys between stores (docs/backup.md).\n"

// budget is the value of -read-limit and -create-limit: "RATE,BURST"
// (requests a second, and at once), or "off", the zero budget.
type budget petstore.Rate

func (b *budget) String() string {
	if b.PerSecond == 0 {
		return "off"
	}
	return strconv.FormatFloat(b.PerSecond, 'f', -1, 64) + "," + strconv.Itoa(b.Burst)
}

func (b *budget) Set(s string) error {
	if strings.TrimSpace(s) == "off" {
		*b = budget{}
		return nil
	}
	rate, burst, ok := strings.Cut(s, ",")
	r, err1 := strconv.ParseFloat(strings.TrimSpace(rate), 64)
	n, err2 := strconv.Atoi(strings.TrimSpace(burst))
	if !ok || err1 != nil || err2 != nil || !(r > 0) || r > 1e9 || n < 1 {
		return fmt.Errorf("%q: want RATE,BURST, such as 200,400 (requests a second, and at once), or off", s)
	}
	*b = budget{PerSecond: r, Burst: n}
	return nil
}

// rateFlags holds the flags of the callers' budgets.
type rateFlags struct {
	reads, creates budget
	redisURL       string // "" keeps the budgets in the process
	failOpen       bool
	pause          time.Duration
}

// check reports a Redis URL that cannot be one.
func (f *rateFlags) check() error {
	if _, err := redis.ParseURL(f.redisURL); f.redisURL != "" && err != nil {
		return fmt.Errorf("-redis: %v; want a URL such as redis://localhost:6379/0", err)
	}
	return nil
}

// limiters returns the handler's budgets, checking that Redis answers, and
// a function that closes them.
func (f *rateFlags) limiters(ctx context.Context, logger *slog.Logger) (petstore.RateLimit, func(), error) {
	l := petstore.RateLimit{FailOpen: f.failOpen, Pause: f.pause}
	newLimiter := func(_ string, r petstore.Rate) petstore.Limiter { return petstore.NewLimiter(r, 0) }
	closeAll := func() {}
	if f.redisURL != "" {
		opts, _ := redis.ParseURL(f.redisURL) // check has refused a URL that it cannot parse
		opts.DialTimeout, opts.ReadTimeout, opts.WriteTimeout = time.Second, time.Second, time.Second
		redis.SetLogger(redisLogger{logger})
		rdb := redislimit.NewClient(opts)
		pingCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		if err := rdb.Ping(pingCtx).Err(); err != nil && !f.failOpen {
			rdb.Close()
			return l, nil, fmt.Errorf("-redis %s: %v; start Redis, fix the URL, or set -rate-limit-fail-open", redisRedact(f.redisURL), err)
		}
		newLimiter = func(prefix string, r petstore.Rate) petstore.Limiter { return redislimit.New(rdb, prefix, r) }
		closeAll = func() { rdb.Close() }
	}
	if f.reads.PerSecond > 0 {
		l.Reads = newLimiter("petstore:reads:", petstore.Rate(f.reads))
	}
	if f.creates.PerSecond > 0 {
		l.Creates = newLimiter("petstore:creates:", petstore.Rate(f.creates))
	}
	return l, closeAll, nil
}

// redisRedact returns the Redis URL without its password.
func redisRedact(u string) string {
	if opts, err := redis.ParseURL(u); err == nil && opts.Password != "" {
		return strings.ReplaceAll(u, opts.Password, "xxxxx")
	}
	return u
}

// redisLogger is go-redis's logger writing through the server's, at WARN.
type redisLogger struct{ logger *slog.Logger }

func (l redisLogger) Printf(ctx context.Context, format string, v ...any) {
	l.logger.WarnContext(ctx, "petstore: redis: "+fmt.Sprintf(format, v...))
}
