package main

import (
	"crypto/sha256"
	"hash/maphash"
	"net/http"
	"strings"

	"github.com/petstore-go/petstore/httpapi"
)

// callers names the caller of a request before the API handler has
// authenticated it, for the bodyGate to share its places fairly, as the
// handler will: by the name of its API key, or for a key without one by a
// fingerprint of the key. It holds each key by a 64-bit hash with a seed of
// its own (hash/maphash), which costs a request some nanoseconds where
// SHA-256 cost a third of a microsecond; it never holds or logs a key. A
// token that is no key has no caller, unless it shares a key's hash (a
// chance of one in 2⁶⁴ a token), which would only count its body in that
// caller's share: the handler answers it 401 all the same.
type callers struct {
	seed  maphash.Seed
	names map[uint64]string
}

// newCallers returns the callers of the entries of PETSTORE_API_KEYS.
func newCallers(entries []string) callers {
	c := callers{seed: maphash.MakeSeed(), names: map[uint64]string{}}
	for _, e := range entries {
		name, key, named := strings.Cut(e, ":")
		if !named {
			name, key = "", e
		}
		if name == "" {
			sum := sha256.Sum256([]byte(key))
			name = "key:" + string(sum[:8])
		}
		c.names[maphash.String(c.seed, key)] = name
	}
	return c
}

// of returns the caller of r, or "" when r carries no valid key.
func (c callers) of(r *http.Request) string {
	token, err := httpapi.BearerToken(r)
	if err != nil {
		return ""
	}
	return c.names[maphash.String(c.seed, token)]
}
