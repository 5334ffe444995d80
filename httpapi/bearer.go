package httpapi

import (
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/petstore-go/petstore/internal/token68"
)

// Errors from BearerToken.
var (
	// ErrNoCredentials means the request carries no usable bearer
	// credential: no Authorization header, more than one, another scheme
	// (then the error is a *SchemeError), or an empty token.
	ErrNoCredentials = errors.New("httpapi: no bearer credentials")
	// ErrMalformedToken means the token has characters that RFC 6750 does
	// not allow in a bearer token; it cannot be valid.
	ErrMalformedToken = errors.New("httpapi: malformed bearer token")
)

// A SchemeError is the error of BearerToken for an Authorization header
// of another scheme than Bearer, such as Basic. It wraps ErrNoCredentials.
type SchemeError struct {
	// Scheme is the scheme the header used, as the registry of HTTP
	// authentication schemes spells it, or "" when it is not a registered
	// scheme: an unregistered word may be a credential sent without a
	// scheme, which must not be repeated.
	Scheme string
}

// Error names the scheme.
func (e *SchemeError) Error() string {
	if e.Scheme == "" {
		return "httpapi: Authorization header of another scheme than Bearer"
	}
	return "httpapi: Authorization header of the " + e.Scheme + " scheme, not Bearer"
}

// Is reports whether target is ErrNoCredentials.
func (e *SchemeError) Is(target error) bool { return target == ErrNoCredentials }

// registeredSchemes are the schemes of the IANA registry of HTTP
// authentication schemes other than Bearer, spelled as it spells them.
var registeredSchemes = [...]string{"Basic", "Concealed", "Digest", "DPoP", "GNAP", "HOBA",
	"Mutual", "Negotiate", "OAuth", "PrivateToken", "SCRAM-SHA-1", "SCRAM-SHA-256", "vapid"}

// BearerToken returns the token of the request's Authorization header,
// "Bearer <token>" with the scheme matched case-insensitively (RFC 9110,
// section 11.1) and one or more spaces before the token. The token is
// checked against the token68 syntax of RFC 6750.
func BearerToken(r *http.Request) (string, error) {
	values := r.Header["Authorization"]
	if len(values) != 1 {
		return "", ErrNoCredentials
	}
	v := values[0]
	const scheme = "bearer"
	if len(v) <= len(scheme) || v[len(scheme)] != ' ' || !strings.EqualFold(v[:len(scheme)], scheme) {
		if t := strings.TrimSpace(v); t == "" || strings.EqualFold(t, scheme) {
			return "", ErrNoCredentials
		}
		word, _, _ := strings.Cut(v, " ")
		if i := slices.IndexFunc(registeredSchemes[:], func(s string) bool { return strings.EqualFold(word, s) }); i >= 0 {
			return "", &SchemeError{Scheme: registeredSchemes[i]}
		}
		return "", &SchemeError{}
	}
	token := strings.TrimLeft(v[len(scheme):], " ")
	if token == "" {
		return "", ErrNoCredentials
	}
	if !token68.Valid(token) {
		return "", ErrMalformedToken
	}
	return token, nil
}
