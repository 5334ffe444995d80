package petstore

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
)

// Operation names an operation of the API, as the API specification names it. An
// Authenticator receives it so that a key can be allowed some operations and
// not others.
type Operation string

// The operations of the API. OpNone is passed for a request that matches no
// operation (an unknown path or method), which is authenticated before it is
// answered so that unauthenticated callers learn nothing about routes.
const (
	OpListPets  Operation = "listPets"
	OpCreatePet Operation = "createPet"
	OpGetPet    Operation = "getPet"
	OpNone      Operation = ""
)

// An Authenticator decides whether a bearer token may perform an operation.
//
// Authenticate is called once per request with the request's context, the
// operation and the token from the Authorization header (never empty, and
// already checked to be a syntactically valid bearer token). It returns the
// context that the store will receive, which may carry the caller's identity,
// or an error: one wrapping ErrUnauthorized gives 401, one wrapping
// ErrForbidden gives 403, and any other error means the authenticator itself
// failed (its backend is down, say) and gives 503, never 401. The error's
// text is logged, never sent to the client, and must not contain the token.
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
// operation and returns the context unchanged. Several keys at once allow
// rotation: add the new key, move clients over, then remove the old one.
//
// Keys are compared in constant time: the token's SHA-256 digest is compared
// with every key's digest, so neither the position of the first differing
// byte nor a key's length shows in the time taken. Empty keys are ignored,
// so APIKeys() and APIKeys("") accept nothing.
func APIKeys(keys ...string) Authenticator {
	a := apiKeys{}
	for _, k := range keys {
		if k != "" {
			a.digests = append(a.digests, sha256.Sum256([]byte(k)))
		}
	}
	return a
}

type apiKeys struct {
	digests [][sha256.Size]byte
}

func (a apiKeys) Authenticate(ctx context.Context, _ Operation, token string) (context.Context, error) {
	got := sha256.Sum256([]byte(token))
	match := 0
	for i := range a.digests {
		match |= subtle.ConstantTimeCompare(got[:], a.digests[i][:])
	}
	if match != 1 {
		return nil, ErrUnauthorized
	}
	return ctx, nil
}
