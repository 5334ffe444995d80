package main

import (
	"fmt"
	"strings"

	"github.com/petstore-go/petstore"
)

// parseAPIKeys returns the trimmed entries, KEY or NAME:KEY, of value,
// separated by commas; its errors never show a key.
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

// apiKeysAuthenticator returns the Authenticator of entries: petstore.APIKeys
// when none is named, petstore.NamedAPIKeys otherwise.
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

// handlerOptions returns the options of the handler that c sets, the
// authenticator only when c has keys.
func handlerOptions(c config) []petstore.Option {
	opts := []petstore.Option{petstore.WithBasePath(c.basePath), petstore.WithStoreTimeout(c.limits.storeTimeout)}
	if len(c.keys) > 0 {
		opts = append(opts, petstore.WithAuthenticator(apiKeysAuthenticator(c.keys)))
	}
	return opts
}

// checkHandlerConfig returns petstore.New's error for the options of c, so
// that run refuses them before it touches a database.
func checkHandlerConfig(c config) error { return petstore.CheckOptions(handlerOptions(c)...) }
