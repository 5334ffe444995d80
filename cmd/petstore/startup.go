package main

import (
	"fmt"
	"strings"

	"github.com/petstore-go/petstore"
)

// apiKeysVar names the environment variable that holds the API keys.
const apiKeysVar = "PETSTORE_API_KEYS"

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
			"give keys separated by commas, or leave it empty to have a key made and kept", apiKeysVar)
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
