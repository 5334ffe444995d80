package httpapi

import (
	"errors"
	"net/http"

	"github.com/petstore-go/petstore/internal/token68"
)

// Errors from BearerToken.
var (
	// ErrNoCredentials means the request carries no usable bearer
	// credential: no Authorization header, more than one, another scheme,
	// or an empty token.
	ErrNoCredentials = errors.New("httpapi: no bearer credentials")
	// ErrMalformedToken means the token has characters that RFC 6750 does
	// not allow in a bearer token; it cannot be valid.
	ErrMalformedToken = errors.New("httpapi: malformed bearer token")
)

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
	if len(v) <= len(scheme) || v[len(scheme)] != ' ' || !equalFoldASCII(v[:len(scheme)], scheme) {
		return "", ErrNoCredentials
	}
	i := len(scheme)
	for i < len(v) && v[i] == ' ' {
		i++
	}
	token := v[i:]
	if token == "" {
		return "", ErrNoCredentials
	}
	if !token68.Valid(token) {
		return "", ErrMalformedToken
	}
	return token, nil
}

// equalFoldASCII reports whether s equals the lower-case ASCII word lower,
// ignoring case.
func equalFoldASCII(s, lower string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}
