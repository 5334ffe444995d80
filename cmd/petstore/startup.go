package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/petstore-go/petstore"
)

// apiKeysVar names the environment variable that holds the API keys.
const apiKeysVar = "PETSTORE_API_KEYS"

// environmentHelp is the part of -help about the environment.
const environmentHelp = `
Environment:
  ` + apiKeysVar + `
    	API keys that clients send as "Authorization: Bearer KEY", separated by commas;
    	NAME:KEY names the caller that holds KEY, so that its old and new key share
    	idempotency keys during a rotation (alice:KEY1,alice:KEY2,bob:KEY3); a key
    	without a name is named by its fingerprint; when unset or empty, petstore
    	makes a key for this run and prints it
  ` + dataFileVar + `
    	SQLite file to keep pets in, as -data (the flag wins); without it, and without
    	a PostgreSQL URL, pets are kept in ` + defaultDataFile + ` in the working directory
  ` + postgresURLVar + `
    	PostgreSQL URL to keep pets in, as -postgres (the flag wins); prefer it to the
    	flag, whose value other users of the host can see
  ` + replicaURLsVar + `
    	URLs of hot standbys of that database, separated by commas, that serve reads
    	(docs/replicas.md)
  ` + tlsCertVar + `, ` + tlsKeyVar + `
    	PEM files of the certificate chain and its key, as -tls-cert and -tls-key
    	(the flags win)
  ` + readLimitVar + `, ` + createLimitVar + `
    	budgets of each caller, as -read-limit and -create-limit (the flags win)
  ` + redisURLVar + `
    	Redis URL to keep the budgets in, shared by the instances that use it, as
    	-redis (the flag wins)
  ` + adminAddrVar + `
    	address of /metrics, /healthz and /readyz, as -admin-addr (the flag wins)
  ` + backupDirVar + `, ` + backupIntervalVar + `, ` + backupKeepVar + `
    	scheduled backups of the SQLite file, as -backup-dir, -backup-interval and
    	-backup-keep (the flags win)
  ` + otlpEndpointVar + `, ` + otlpTracesEndpointVar + `
    	OTLP collector to send a trace span per request to, over HTTP (port 4318);
    	unset, nothing is traced
  ` + otlpProtocolVar + `, ` + otlpTracesProtocolVar + `
    	must be http/protobuf when set; grpc is refused at start
  ` + otelSDKDisabledVar + `=true, ` + otelTracesExporterVar + `=none
    	turn tracing off
  OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES, OTEL_TRACES_SAMPLER, OTEL_EXPORTER_OTLP_HEADERS,
  OTEL_EXPORTER_OTLP_TIMEOUT, OTEL_EXPORTER_OTLP_COMPRESSION, OTEL_EXPORTER_OTLP_CERTIFICATE
    	read by OpenTelemetry as its specification says
`

// parseFlags parses args into fs. On -help it writes to help what
// petstore does, its flags and the environment variables it reads, and
// returns flag.ErrHelp; on a bad flag it returns an error that says so,
// printing nothing itself, so that the error is reported once.
func parseFlags(fs *flag.FlagSet, args []string, help io.Writer) error {
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	err := fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprint(help, "Usage: petstore [flags]\n       "+migrateCommand+" [-postgres URL]\n"+
			"       petstore backup|restore|export|import ... (each with -help)\n\n"+
			"Serves the animal store API over HTTP or HTTPS; "+migrateCommand+" creates or upgrades the PostgreSQL tables and exits; "+
			"backup and restore copy the SQLite file, export and import move pets and keys between stores (docs/backup.md).\n\nFlags:\n")
		fs.SetOutput(help)
		fs.PrintDefaults()
		fmt.Fprint(help, environmentHelp)
		return err
	case err != nil:
		return removedFlag(err)
	}
	return nil
}

// parseAPIKeys returns the entries in value, the value of apiKeysVar:
// separated by commas, each a key or NAME:KEY (":" cannot occur in a bearer
// token, so the first one ends the name), with spaces around the entries,
// names and keys trimmed. An empty value gives no key, so that petstore
// makes one; a value that holds only commas and spaces is refused, as it
// was meant to set keys but sets none, and so is an entry with ":" but no
// name or no key. The errors never show a key. apiKeysAuthenticator makes
// the Authenticator of the entries.
func parseAPIKeys(value string) ([]string, error) {
	var keys []string
	n := 0
	for k := range strings.SplitSeq(value, ",") {
		n++
		if k = strings.TrimSpace(k); k == "" {
			continue
		}
		if name, key, named := strings.Cut(k, ":"); named {
			name, key = strings.TrimSpace(name), strings.TrimSpace(key)
			switch {
			case name == "":
				return nil, fmt.Errorf("%s: entry %d has no name before its \":\"; write NAME:KEY, "+
					"or the key alone to have it named by its fingerprint", apiKeysVar, n)
			case key == "":
				return nil, fmt.Errorf("%s: entry %d (%s:) has no key after its \":\"; write NAME:KEY", apiKeysVar, n, name)
			}
			k = name + ":" + key
		}
		keys = append(keys, k)
	}
	if len(keys) == 0 && value != "" {
		return nil, fmt.Errorf("%s is set but holds no usable key, only commas and spaces; "+
			"give keys separated by commas, or leave it empty to have a key made for this run", apiKeysVar)
	}
	return keys, nil
}

// apiKeysAuthenticator returns the Authenticator of entries from
// parseAPIKeys: each NAME:KEY gives KEY the principal NAME, and a key alone
// is named by its fingerprint (see petstore.NamedAPIKeys). Without any
// name it is petstore.APIKeys, whose name the start-up errors then give.
func apiKeysAuthenticator(entries []string) petstore.Authenticator {
	keys := make([]petstore.APIKey, len(entries))
	anyNamed := false
	for i, e := range entries {
		if name, key, named := strings.Cut(e, ":"); named {
			keys[i] = petstore.APIKey{Principal: name, Key: key}
			anyNamed = true
		} else {
			keys[i] = petstore.APIKey{Key: e}
		}
	}
	if !anyNamed {
		return petstore.APIKeys(entries...)
	}
	return petstore.NamedAPIKeys(keys...)
}

// checkHandlerConfig returns the error that petstore.New gives, as it is,
// for the options of c that can be wrong: the API keys, the base path and
// the store timeout. It lets run refuse them before it touches a
// database. No keys is not wrong here: run then makes one.
func checkHandlerConfig(c config) error {
	opts := []petstore.Option{
		petstore.WithBasePath(c.basePath),
		petstore.WithStoreTimeout(c.limits.storeTimeout),
	}
	if len(c.keys) > 0 {
		opts = append(opts, petstore.WithAuthenticator(apiKeysAuthenticator(c.keys)))
	}
	return petstore.CheckOptions(opts...)
}
