package main

import (
	"hash/maphash"
	"net/http"
	"strings"

	"github.com/petstore-go/petstore/httpapi"
)

// callers finds the caller of a request before the API handler has
// authenticated it, for the bodyGate to share its places fairly, as the
// handler will: the keys of one name are one caller, and a key without a
// name is a caller of its own. It holds each key by a 64-bit hash with a seed of
// its own (hash/maphash), which costs a request some nanoseconds where
// SHA-256 cost a third of a microsecond; it never holds or logs a key. A
// token that is no key is nobody's, unless it shares a key's hash (a
// chance of one in 2⁶⁴ a token), which would only count its body in that
// caller's share: the handler answers it 401 all the same.
type callers struct {
	seed   maphash.Seed
	byHash map[uint64]*caller
	nobody *caller // the caller of a request without a valid key
}

// A caller holds the API keys of one name, or one key without a name.
// Callers are made once, at start, so that the bodyGate keeps its count of
// their places in them.
type caller struct {
	held int // places held in the bodyGate; guarded by its mu
}

// newCallers returns the callers of the entries of PETSTORE_API_KEYS.
func newCallers(entries []string) callers {
	c := callers{seed: maphash.MakeSeed(), byHash: map[uint64]*caller{}, nobody: &caller{}}
	named := map[string]*caller{}
	for _, e := range entries {
		name, key, ok := strings.Cut(e, ":")
		if !ok {
			name, key = "", e
		}
		who := named[name]
		if who == nil {
			who = &caller{}
			if name != "" {
				named[name] = who
			}
		}
		c.byHash[maphash.String(c.seed, key)] = who
	}
	return c
}

// of returns the caller of r: nobody when r carries no valid key.
func (c callers) of(r *http.Request) *caller {
	token, err := httpapi.BearerToken(r)
	who := c.byHash[maphash.String(c.seed, token)]
	if err != nil || who == nil {
		return c.nobody
	}
	return who
}
