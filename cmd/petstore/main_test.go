package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/client"
	"github.com/petstore-go/petstore/petstoretest"
)

// TestServerConformance runs the HTTP conformance suite against the server
// as a process without -admin-addr, which serves no admin endpoints: on its
// default store, a SQLite file, over plain HTTP, warning once that API keys
// travel unencrypted, and over HTTPS, so HTTP/2, with the key pair named in
// the environment, through a client that trusts only the test's CA; and on
// PostgreSQL, where the pets are then, with a log that says where, with the
// schema in effect, and without the password.
func TestServerConformance(t *testing.T) {
	const key = "conformance-key"
	bin, ca := buildServer(t), newTestCA(t)
	certFile, keyFile := pairFiles(t, ca.valid(t))
	plainWarning := regexp.MustCompile(`(?m)^.*level=WARN.*serving plain HTTP: API keys travel unencrypted unless a proxy in front terminates TLS.*$`)
	for _, tt := range []struct {
		name, scheme string
		env          []string
		client       *http.Client
		warnings     int
		logs         []string
	}{
		{"http", "http", nil, nil, 1, []string{"storing pets in a SQLite file", "serving plain HTTP"}},
		{"https", "https", []string{tlsCertVar + "=" + certFile, tlsKeyVar + "=" + keyFile}, ca.client(), 0,
			[]string{"storing pets in a SQLite file", "serving HTTPS"}},
		{"postgres", "http", nil, nil, 1, []string{"storing pets in PostgreSQL", "host=127.0.0.1", "table=pets "}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			schema := ""
			if tt.name == "postgres" {
				var serverURL string
				schema, serverURL = postgresSchema(t)
				tt.env = []string{postgresURLVar + "=" + serverURL}
				tt.logs = append(tt.logs, "schema="+schema)
			}
			p := startServer(t, bin, key, tt.env)
			if !strings.HasPrefix(p.baseURL, tt.scheme+"://") {
				t.Fatalf("the server prints %s; want an %s:// URL", p.baseURL, tt.scheme)
			}
			petstoretest.TestServer(t, petstoretest.Endpoint{BaseURL: p.baseURL, APIKey: key, Client: tt.client})
			log := p.stderr.String()
			for _, want := range tt.logs {
				if !strings.Contains(log, want) {
					t.Errorf("the log does not say %q:\n%s", want, log)
				}
			}
			if schema != "" && postgresCount(t, schema) == 0 {
				t.Errorf("%s.pets is empty after the suite; the server did not store pets in PostgreSQL", schema)
			}
			if strings.Contains(log, postgresSecret) {
				t.Errorf("the log shows the password:\n%s", log)
			}
			if n := len(plainWarning.FindAllString(log, -1)); n != tt.warnings {
				t.Errorf("the log has %d warnings that API keys travel unencrypted, want %d:\n%s", n, tt.warnings, log)
			}
			if adminLine.MatchString(p.stdout.String()) || strings.Contains(log, "admin endpoints") {
				t.Errorf("without -admin-addr, the server speaks of admin endpoints:\n%s\n%s", p.stdout, log)
			}
		})
	}
}

func TestParseConfig(t *testing.T) {
	type where struct{ Addr, BasePath string }
	checkConfigs(t, []configCase[where]{
		{name: "defaults", want: where{"localhost:8080", "/v1"}},
		{name: "flags", args: []string{"-addr", ":9000", "-base-path", "/api/v2"}, want: where{":9000", "/api/v2"}},
		{name: "stray argument", args: []string{"serve"}, wantErr: `unexpected arguments ["serve"]; see -help`},
	}, func(c config) where { return where{c.addr, c.basePath} })
}

func TestParseConfigTLS(t *testing.T) {
	type tlsConfig struct {
		Cert, Key      string
		MinVersion     string
		ReloadInterval time.Duration
	}
	defaults := tlsConfig{MinVersion: "TLS 1.2", ReloadInterval: 10 * time.Second}
	pair, env := tlsConfig{"c.pem", "k.pem", "TLS 1.2", 10 * time.Second}, map[string]string{"PETSTORE_TLS_CERT": "c.pem", "PETSTORE_TLS_KEY": "k.pem"}
	tests := []configCase[tlsConfig]{
		{name: "defaults: no TLS", want: defaults},
		{name: "flags", args: []string{"-tls-cert", "c.pem", "-tls-key", "k.pem"}, want: pair},
		{name: "environment", env: env, want: pair},
		{name: "flags win", args: []string{"-tls-cert", "flag.pem"}, env: env, want: tlsConfig{"flag.pem", "k.pem", "TLS 1.2", 10 * time.Second}},
		{name: "TLS 1.3, checks off", args: []string{"-tls-cert", "c.pem", "-tls-key", "k.pem", "-tls-min-version", "1.3", "-tls-reload-interval", "0"},
			want: tlsConfig{Cert: "c.pem", Key: "k.pem", MinVersion: "TLS 1.3"}},
		{name: "key without certificate", env: map[string]string{"PETSTORE_TLS_KEY": "k.pem"},
			wantErr: "a TLS key is given (k.pem) but no certificate: set -tls-cert or PETSTORE_TLS_CERT too"},
		{name: "certificate without key", args: []string{"-tls-cert", "c.pem"},
			wantErr: "a TLS certificate is given (c.pem) but no key: set -tls-key or PETSTORE_TLS_KEY too"},
		{name: "TLS 1.0", args: []string{"-tls-min-version", "1.0"}, wantErr: `-tls-min-version "1.0": want 1.2 or 1.3`},
		{name: "negative interval", args: []string{"-tls-reload-interval", "-1s"}, wantErr: "-tls-reload-interval -1s: want 0 or more"},
	}
	checkConfigs(t, tests, func(c config) tlsConfig {
		return tlsConfig{Cert: c.tlsCert, Key: c.tlsKey, MinVersion: tls.VersionName(c.tlsMinVersion), ReloadInterval: c.tlsReloadInterval}
	})
}

// A configCase is a case of a table of parseConfig: the arguments and the
// environment, and what the test takes of the configuration, or the error.
type configCase[T any] struct {
	name    string
	args    []string
	env     map[string]string
	want    T
	wantErr string
}

// checkConfigs runs parseConfig on each case and compares what view takes of
// the configuration, or the error, with the case's.
func checkConfigs[T any](t *testing.T, cases []configCase[T], view func(config) T, opts ...cmp.Option) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			c, gotErr := parseConfigFor(tt.args, tt.env)
			if gotErr != tt.wantErr {
				t.Fatalf("parseConfig(%q) error = %q, want %q", tt.args, gotErr, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, view(c), opts...); gotErr == "" && diff != "" {
				t.Errorf("parseConfig(%q) (-want +got):\n%s", tt.args, diff)
			}
		})
	}
}

// parseConfigFor parses args with env as the environment, and returns the
// configuration and the error's text, or "" for none.
func parseConfigFor(args []string, env map[string]string) (config, string) {
	c, err := parseConfig(args, func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		return c, err.Error()
	}
	return c, ""
}

// TestFlagWinsWhenEmpty: a flag given on the command line wins over its
// variable even when it is empty, for every flag that a variable sets too.
func TestFlagWinsWhenEmpty(t *testing.T) {
	env := map[string]string{adminAddrVar: ":9090", backupDirVar: "backups", dataFileVar: "other.db",
		tlsCertVar: "cert.pem", tlsKeyVar: "key.pem", redisURLVar: "redis://127.0.0.1:1/0", postgresURLVar: "postgres://env@db/b"}
	c, err := parseConfigFor([]string{"-admin-addr=", "-backup-dir=", "-data=", "-tls-cert=", "-tls-key=", "-redis=", "-postgres="}, env)
	if err != "" {
		t.Fatal(err)
	}
	got := []string{c.adminAddr, c.backups.dir, c.dataFile, c.tlsCert, c.tlsKey, c.rates.redisURL, c.postgresURL}
	if diff := cmp.Diff([]string{"", "", defaultDataFile, "", "", "", ""}, got); diff != "" {
		t.Errorf("empty flags over set variables (-want +got):\n%s", diff)
	}
	delete(env, dataFileVar) // a data file and PostgreSQL together are refused
	c, _ = parseConfigFor(nil, env)
	got = []string{c.adminAddr, c.backups.dir, c.tlsCert, c.tlsKey, c.rates.redisURL, c.postgresURL}
	if diff := cmp.Diff([]string{":9090", "backups", "cert.pem", "key.pem", "redis://127.0.0.1:1/0", "postgres://env@db/b"}, got); diff != "" {
		t.Errorf("the variables alone (-want +got):\n%s", diff)
	}
	if _, err := parseConfigFor(nil, map[string]string{backupIntervalVar: "often"}); !strings.HasPrefix(err, backupIntervalVar+"=often: ") {
		t.Errorf("a bad %s: error %q", backupIntervalVar, err)
	}
}

// TestHelpMatchesDocs compares the flags and the environment variables
// that -help lists with the table of them in docs/operating.md, both ways.
// The help gives each flag's default once, says that the key made is kept,
// and does not show the URL of PETSTORE_POSTGRES_URL, which carries a
// password, as the default of -postgres.
func TestHelpMatchesDocs(t *testing.T) {
	var help bytes.Buffer
	getenv := func(k string) string {
		return map[string]string{postgresURLVar: "postgres://app:" + postgresSecret + "@db/shop"}[k]
	}
	if _, err := parseConfig([]string{"-help"}, getenv, &help); err == nil {
		t.Fatal("parseConfig(-help) succeeded; want flag.ErrHelp")
	}
	if strings.Contains(help.String(), postgresSecret) {
		t.Errorf("-help shows the password:\n%s", help.String())
	}
	if n := strings.Count(help.String(), "(default 1h0m0s)"); n != 1 || strings.Contains(help.String(), "else 1h") {
		t.Errorf("-backup-interval's default appears %d times, or twice in one line:\n%s", n, help.String())
	}
	if strings.Contains(help.String(), "for this run") || !strings.Contains(help.String(), "petstore.db.key") {
		t.Errorf("-help says the made key lasts for this run, or not where it is kept:\n%s", help.String())
	}
	flagsPart, envPart, ok := strings.Cut(help.String(), "\nEnvironment:\n")
	if !ok {
		t.Fatalf("-help has no Environment section:\n%s", help.String())
	}
	helpFlags := names(regexp.MustCompile(`(?m)^  (-[a-z0-9-]+)`), flagsPart)
	helpVars := names(regexp.MustCompile(`\b((?:PETSTORE|OTEL)_[A-Z0-9_]+)`), envPart)

	// The operating guide's table, and the one of the guide on backups.
	var flagCells, varCells strings.Builder
	for _, doc := range []string{"../../docs/operating.md", "../../docs/backup.md"} {
		_, table, ok := strings.Cut(readFile(t, doc), "\n| flag | variable | default | |\n")
		if !ok {
			t.Fatalf("%s has no table of flags and variables (| flag | variable | default | |)", doc)
		}
		for line := range strings.Lines(table) {
			if !strings.HasPrefix(line, "|") {
				break
			}
			cells := strings.Split(line, "|")
			if len(cells) < 4 {
				continue
			}
			flagCells.WriteString(cells[1] + "\n")
			varCells.WriteString(cells[2] + "\n")
		}
	}
	readmeFlags := names(regexp.MustCompile("`(-[a-z0-9-]+)`"), flagCells.String())
	readmeVars := names(regexp.MustCompile("`((?:PETSTORE|OTEL)_[A-Z0-9_]+)`"), varCells.String())

	if diff := cmp.Diff(helpFlags, readmeFlags); diff != "" {
		t.Errorf("flags: -help (-) and docs/operating.md's table (+) differ:\n%s", diff)
	}
	if diff := cmp.Diff(helpVars, readmeVars); diff != "" {
		t.Errorf("environment variables: -help (-) and docs/operating.md's table (+) differ:\n%s", diff)
	}
	for _, v := range []string{adminAddrVar, otlpEndpointVar, apiKeysVar} {
		if !slices.Contains(helpVars, v) {
			t.Errorf("-help does not list %s", v)
		}
	}
}

// names returns the first submatches of re in text, sorted, without
// duplicates.
func names(re *regexp.Regexp, text string) []string {
	var out []string
	for _, m := range re.FindAllStringSubmatch(text, -1) {
		out = append(out, m[1])
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// TestChooseStore checks which store the flags and the environment select,
// and that naming two stores is refused with a message that names both.
func TestChooseStore(t *testing.T) {
	const url = "postgres://app@db/shop"
	type choice struct {
		Store    storeKind
		DataFile string
		Postgres string
	}
	tests := []configCase[choice]{
		{name: "default: petstore.db", want: choice{Store: storeSQLite, DataFile: "petstore.db"}},
		{name: "-data", args: []string{"-data", "/var/lib/pets.db"}, want: choice{Store: storeSQLite, DataFile: "/var/lib/pets.db"}},
		{name: "PETSTORE_DATA", env: map[string]string{"PETSTORE_DATA": "env.db"}, want: choice{Store: storeSQLite, DataFile: "env.db"}},
		{name: "-data wins over PETSTORE_DATA", args: []string{"-data", "flag.db"}, env: map[string]string{"PETSTORE_DATA": "env.db"},
			want: choice{Store: storeSQLite, DataFile: "flag.db"}},
		{name: "-store sqlite", args: []string{"-store", "sqlite"}, want: choice{Store: storeSQLite, DataFile: "petstore.db"}},
		{name: "-store memory", args: []string{"-store", "memory"}, want: choice{Store: storeMemory}},
		{name: "PostgreSQL by the environment", env: map[string]string{"PETSTORE_POSTGRES_URL": url}, want: choice{Store: storePostgres, Postgres: url}},
		{name: "-store postgres -postgres", args: []string{"-store", "postgres", "-postgres", url}, want: choice{Store: storePostgres, Postgres: url}},
		{name: "unknown kind", args: []string{"-store", "mysql"}, wantErr: `-store "mysql": want sqlite, memory or postgres`},
		{name: "data file and PostgreSQL", args: []string{"-data", "x.db"}, env: map[string]string{"PETSTORE_POSTGRES_URL": url},
			wantErr: "two stores are named: a data file by -data (x.db) and PostgreSQL by PETSTORE_POSTGRES_URL; keep one of them"},
		{name: "both variables", env: map[string]string{"PETSTORE_DATA": "x.db", "PETSTORE_POSTGRES_URL": url},
			wantErr: "two stores are named: a data file by PETSTORE_DATA (x.db) and PostgreSQL by PETSTORE_POSTGRES_URL; keep one of them"},
		{name: "memory and a data file", args: []string{"-store", "memory", "-data", "x.db"},
			wantErr: "two stores are named: -store memory, and -data; drop one of them"},
		{name: "memory and PostgreSQL", args: []string{"-store", "memory"}, env: map[string]string{"PETSTORE_POSTGRES_URL": url},
			wantErr: "two stores are named: -store memory, and PETSTORE_POSTGRES_URL; drop one of them"},
		{name: "sqlite and PostgreSQL", args: []string{"-store", "sqlite", "-postgres", url},
			wantErr: "two stores are named: -store sqlite, and PostgreSQL by -postgres; drop one of them"},
		{name: "postgres without a URL", args: []string{"-store", "postgres"},
			wantErr: "-store postgres needs the database's URL in PETSTORE_POSTGRES_URL or -postgres"},
		{name: "postgres and a data file", args: []string{"-store", "postgres", "-postgres", url}, env: map[string]string{"PETSTORE_DATA": "x.db"},
			wantErr: "two stores are named: a data file by PETSTORE_DATA (x.db) and PostgreSQL by -postgres; keep one of them"},
		{name: "replicas without PostgreSQL", env: map[string]string{"PETSTORE_POSTGRES_REPLICA_URLS": url},
			wantErr: "PETSTORE_POSTGRES_REPLICA_URLS names PostgreSQL replicas, but pets are kept in sqlite; name the primary in PETSTORE_POSTGRES_URL, or unset PETSTORE_POSTGRES_REPLICA_URLS"},
		{name: "a listen URL without PostgreSQL", args: []string{"-store", "memory", "-postgres-listen", url},
			wantErr: "-postgres-listen (or PETSTORE_POSTGRES_LISTEN_URL) names where to hear of PostgreSQL's new pets, but pets are kept in memory; drop it"},
	}
	checkConfigs(t, tests, func(c config) choice { return choice{Store: c.store, DataFile: c.dataFile, Postgres: c.postgresURL} })
}

// newClient returns a Go client of the server p with the API key key.
func newClient(t *testing.T, p *serverProcess, key string) *client.Client {
	t.Helper()
	c, err := client.New(p.baseURL, client.WithAPIKey(key))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// allPets lists every pet of the server p, page by page.
func allPets(ctx context.Context, t *testing.T, p *serverProcess, key string) []petstore.Pet {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	var pets []petstore.Pet
	for pet, err := range newClient(t, p, key).All(ctx, petstore.ListOptions{}) {
		if err != nil {
			t.Fatalf("listing the pets: %v", err)
		}
		pets = append(pets, pet)
	}
	return pets
}
