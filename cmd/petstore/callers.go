package main

import (
	"crypto/sha256"
	"net/http"
	"strings"

	"github.com/petstore-go/petstore/httpapi"
)

// callers names the caller of a request before the API handler has
// authenticated it, for the bodyGate to share its places fairly, as the
// handler will: by the name of its API key, or
// for a key without one by the key itself (held hashed, and never logged).
// A request without a valid key has no caller.
type callers map[[sha256.Size]byte]string

// newCallers returns the callers of the entries of PETSTORE_API_KEYS.
func newCallers(entries []string) callers {
	c := callers{}
	for _, e := range entries {
		name, key, named := strings.Cut(e, ":")
		if !named {
			name, key = "", e
		}
		sum := sha256.Sum256([]byte(key))
		c[sum] = name
		if name == "" {
			c[sum] = "key:" + string(sum[:8])
		}
	}
	return c
}

// of returns the caller of r, or "" when r carries no valid key.
func (c callers) of(r *http.Request) string {
	token, err := httpapi.BearerToken(r)
	if err != nil {
		return ""
	}
	return c[sha256.Sum256([]byte(token))]
}
