package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/memstore"
)

// apiKeysVar names the environment variable that holds the API keys.
const apiKeysVar = "PETSTORE_API_KEYS"

// environmentHelp is the part of -help about the environment.
const environmentHelp = `
Environment:
  ` + apiKeysVar + `
    	API keys that clients send as "Authorization: Bearer KEY", separated by commas;
    	when unset or empty, petstore makes a key for this run and prints it
  ` + dataFileVar + `
    	SQLite file to keep pets in, as -data (the flag wins); without it, and without
    	a PostgreSQL URL, pets are kept in ` + defaultDataFile + ` in the working directory
  ` + postgresURLVar + `
    	PostgreSQL URL to keep pets in, as -postgres (the flag wins); prefer it to the
    	flag, whose value other users of the host can see
  ` + tlsCertVar + `, ` + tlsKeyVar + `
    	PEM files of the certificate chain and its key, as -tls-cert and -tls-key
    	(the flags win)
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
		fmt.Fprint(help, "Usage: petstore [flags]\n\nServes the animal store API over HTTP or HTTPS.\n\nFlags:\n")
		fs.SetOutput(help)
		fs.PrintDefaults()
		fmt.Fprint(help, environmentHelp)
		return err
	case err != nil:
		return fmt.Errorf("%v; see -help", err)
	}
	return nil
}

// parseAPIKeys returns the keys in value, the value of apiKeysVar: separated
// by commas, with spaces around them trimmed. An empty value gives no key,
// so that petstore makes one; a value that holds only commas and spaces is
// refused, as it was meant to set keys but sets none.
func parseAPIKeys(value string) ([]string, error) {
	var keys []string
	for k := range strings.SplitSeq(value, ",") {
		if k = strings.TrimSpace(k); k != "" {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 && value != "" {
		return nil, fmt.Errorf("%s is set but holds no usable key, only commas and spaces; "+
			"give keys separated by commas, or leave it empty to have a key made for this run", apiKeysVar)
	}
	return keys, nil
}

// checkHandlerConfig returns the error that petstore.New gives, as it is,
// for the options of c that can be wrong: the API keys, the base path and
// the store timeout. It lets run refuse them before it touches a
// database. No keys is not wrong here: run then makes one.
func checkHandlerConfig(c config) error {
	opts := []petstore.Option{
		petstore.WithStore(memstore.New()),
		petstore.WithBasePath(c.basePath),
		petstore.WithStoreTimeout(c.limits.storeTimeout),
	}
	if len(c.keys) > 0 {
		opts = append(opts, petstore.WithAuthenticator(petstore.APIKeys(c.keys...)))
	} else {
		opts = append(opts, petstore.WithAuthenticator(petstore.APIKeys("made-at-start")))
	}
	_, err := petstore.New(opts...)
	return err
}
