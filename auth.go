package petstore

import (
	"cmp"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/petstore-go/petstore/internal/token68"
)

// An Authenticator decides whether a bearer token may perform an operation.
//
// Authenticate is called once per request with the request's context, the
// operation and the token: the bearer token of the Authorization header
// (never empty, and syntactically valid), or the credential that
// WithCredential reads (never empty). It returns the context that the store
// will receive, which should carry the caller's principal (see
// WithPrincipal), or an error: one wrapping ErrUnauthorized gives 401, one
// wrapping ErrForbidden gives 403, and any other error means the
// authenticator itself failed (its backend is down, say) and gives 503,
// never 401. The error's text is logged, never sent, and must not contain
// the token.
//
// When the returned context carries no principal, the handler names the
// caller by a fingerprint of the token: "token-" and the first 8 bytes of
// the token's SHA-256 digest in hex. The Store, idempotency keys and an
// Observer then see that principal, never the token. An Authenticator whose
// callers hold several tokens each (one per device, say) calls
// WithPrincipal with the caller's name, so that their idempotency keys are
// shared across those tokens.
//
// Authenticate may be called concurrently from multiple goroutines.
type Authenticator interface {
	Authenticate(ctx context.Context, op Operation, token string) (context.Context, error)
}

// AuthenticatorFunc adapts a function to the Authenticator interface.
type AuthenticatorFunc func(ctx context.Context, op Operation, token string) (context.Context, error)

// Authenticate calls f(ctx, op, token).
func (f AuthenticatorFunc) Authenticate(ctx context.Context, op Operation, token string) (context.Context, error) {
	return f(ctx, op, token)
}

// APIKeys returns an Authenticator that accepts any of keys for every
// operation. Several keys at once allow rotation: add the new key, move
// clients over, then remove the old one. Empty keys are ignored.
//
// The context it returns carries the caller's principal (see Principal):
// "key-" and the first 8 bytes of the key's SHA-256 digest in hex. Since
// each key is its own principal, a create retried with the same
// Idempotency-Key after its caller moved to a new key creates a second pet;
// NamedAPIKeys gives the old and the new key one principal.
//
// Keys are compared in constant time: the token's SHA-256 digest is compared
// with every key's digest, so neither the position of the first differing
// byte nor a key's length shows in the time taken.
//
// New refuses an APIKeys without any usable key, since it would refuse
// every request, and one with a key that no bearer token can carry (RFC 6750
// allows letters, digits, "-", ".", "_", "~", "+", "/" and trailing "=").
func APIKeys(keys ...string) Authenticator {
	named := make([]APIKey, len(keys))
	for i, k := range keys {
		named[i].Key = k
	}
	return newAPIKeys("APIKeys", named)
}

// An APIKey is a key that NamedAPIKeys accepts, with the principal of the
// caller that holds it.
type APIKey struct {
	// Principal names the caller (see Principal): 1 to 64 visible ASCII
	// characters other than ",", ":" and quotes, not beginning with "key-"
	// or "token-", the prefixes of fingerprints. It is not secret: it
	// appears in logs and metrics. When it is "", the key is named by its
	// fingerprint, as APIKeys names it.
	Principal string
	// Key is the secret that the caller sends as a bearer token.
	Key string
}

// NamedAPIKeys returns an Authenticator that accepts any of keys for every
// operation, as APIKeys does, and gives each caller the principal that its
// APIKey names. Keys with the same principal share idempotency keys: a
// create retried with the same Idempotency-Key after its caller moved from
// the old key to the new one is replayed, not created again.
//
//	petstore.NamedAPIKeys(
//		petstore.APIKey{Principal: "alice", Key: aliceOld},
//		petstore.APIKey{Principal: "alice", Key: aliceNew},
//		petstore.APIKey{Principal: "bob", Key: bob},
//	)
//
// Entries with an empty Key are ignored. New refuses a NamedAPIKeys without
// any usable key, one with a key that no bearer token can carry, one with
// a principal outside the syntax above, and one that gives a key two
// principals.
func NamedAPIKeys(keys ...APIKey) Authenticator {
	return newAPIKeys("NamedAPIKeys", keys)
}

// newAPIKeys returns the authenticator of APIKeys and NamedAPIKeys, which
// fn names in New's errors.
func newAPIKeys(fn string, keys []APIKey) apiKeys {
	a := apiKeys{fn: fn}
	seen := map[[sha256.Size]byte]int{} // the index of a digest in a.digests
	for i, k := range keys {
		switch {
		case k.Key == "":
			continue
		case !token68.Valid(k.Key):
			a.problems = append(a.problems, fmt.Sprintf("key %d of %d has characters that no bearer token can carry; "+
				"use only letters, digits, -, ., _, ~, + and /, with = only at the end", i+1, len(keys)))
			continue
		}
		if problem := principalProblem(k.Principal); problem != "" {
			a.problems = append(a.problems, fmt.Sprintf("the principal of key %d of %d %s", i+1, len(keys), problem))
			continue
		}
		d := sha256.Sum256([]byte(k.Key))
		principal := cmp.Or(k.Principal, "key-"+hex.EncodeToString(d[:8]))
		if j, ok := seen[d]; ok {
			if a.principals[j] != principal {
				a.problems = append(a.problems, fmt.Sprintf("key %d of %d is an earlier key again with another principal (%q, not %q); "+
					"give each key one principal", i+1, len(keys), principal, a.principals[j]))
			}
			continue
		}
		seen[d] = len(a.digests)
		a.digests = append(a.digests, d)
		a.principals = append(a.principals, principal)
	}
	if len(a.digests) == 0 && len(a.problems) == 0 {
		a.problems = append(a.problems, "no key is set, so every request would be refused; give at least one non-empty key")
	}
	return a
}

// maxPrincipalLen is the longest principal that NamedAPIKeys accepts.
const maxPrincipalLen = 64

// principalProblem returns why p cannot be the principal of an APIKey, or
// "" when it can.
func principalProblem(p string) string {
	if p == "" {
		return ""
	}
	if len(p) > maxPrincipalLen {
		return fmt.Sprintf("is %d bytes long; use at most %d", len(p), maxPrincipalLen)
	}
	if strings.ContainsFunc(p, func(r rune) bool { return r <= ' ' || r >= 0x7f || strings.ContainsRune(`,:"'\`, r) }) {
		return fmt.Sprintf("%q has a character other than visible ASCII, or one of , : \" ' \\; use letters, digits and - . _ @ for instance", p)
	}
	if strings.HasPrefix(p, "key-") || strings.HasPrefix(p, "token-") {
		return fmt.Sprintf("%q begins as a key's fingerprint does (key- or token-); choose another name, or leave it empty for the fingerprint", p)
	}
	return ""
}

type apiKeys struct {
	fn         string // APIKeys or NamedAPIKeys, for New's errors
	digests    [][sha256.Size]byte
	principals []string // of each key, made once so that a request costs no string
	problems   []string // why New must refuse it
}

func (a apiKeys) Authenticate(ctx context.Context, _ Operation, token string) (context.Context, error) {
	got := sha256.Sum256([]byte(token))
	match := -1
	for i := range a.digests {
		match = subtle.ConstantTimeSelect(subtle.ConstantTimeCompare(got[:], a.digests[i][:]), i, match)
	}
	if match < 0 {
		return nil, ErrUnauthorized
	}
	return context.WithValue(ctx, principalKey{}, a.principals[match]), nil
}

// check returns an error naming every reason why a can never authenticate.
func (a apiKeys) check() error {
	if len(a.problems) == 0 {
		return nil
	}
	return fmt.Errorf("WithAuthenticator: %s: %s", a.fn, strings.Join(a.problems, "; "))
}

// principalKey is the context key of the principal.
type principalKey struct{}

// WithPrincipal returns a copy of ctx that carries principal, the name of
// the authenticated caller. An Authenticator calls it on the context it
// returns. The principal must not be secret: it scopes idempotency keys and
// may appear in logs and metrics. For "", the handler uses a fingerprint of
// the caller's token instead (see Authenticator).
func WithPrincipal(ctx context.Context, principal string) context.Context {
	return context.WithValue(ctx, principalKey{}, principal)
}

// Principal returns the principal that ctx carries, or "" when it carries
// none. A Store may use it to scope what it stores or returns: in a store
// call from the handler, it is never "".
func Principal(ctx context.Context) string {
	p, _ := ctx.Value(principalKey{}).(string)
	return p
}

// tokenPrincipal is the principal of a caller whose Authenticator names
// none (see Authenticator).
func tokenPrincipal(token string) string {
	d := sha256.Sum256([]byte(token))
	return "token-" + hex.EncodeToString(d[:8])
}
