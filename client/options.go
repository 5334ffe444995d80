package client

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// An Option configures the Client that New returns.
type Option interface {
	apply(*Client) error
}

type optionFunc func(*Client) error

func (f optionFunc) apply(c *Client) error { return f(c) }

// option returns an Option that applies set, or fails with format and
// args when bad is set.
func option(bad bool, set func(*Client), format string, args ...any) Option {
	return optionFunc(func(c *Client) error {
		if bad {
			return fmt.Errorf(format, args...)
		}
		set(c)
		return nil
	})
}

// Defaults of the options.
const (
	// DefaultRetries is how many times a Client retries a request that may
	// succeed later, after the first attempt.
	DefaultRetries = 4
	// DefaultMinBackoff and DefaultMaxBackoff bound the waits between
	// attempts (see WithBackoff).
	DefaultMinBackoff = 100 * time.Millisecond
	DefaultMaxBackoff = 10 * time.Second
	// DefaultTimeout is how long one request may take, from sending it to
	// reading the whole answer, unless WithTimeout sets another.
	DefaultTimeout = 30 * time.Second
	// MaxListPets is the most pets that List collects when
	// ListOptions.Limit is 0: about 1 MB of pets with names of 20 bytes.
	MaxListPets = 10_000
)

// WithAPIKey sets the API key that the Client sends with every request, as
// "Authorization: Bearer key". New needs it, or WithAPIKeyFunc, which
// chooses a key per call instead. Of WithAPIKey and WithAPIKeyFunc, the one
// given last applies.
func WithAPIKey(key string) Option {
	var why string
	switch {
	case key == "":
		why = "the key is empty; give the key that the server accepts, or omit the option"
	case strings.ContainsFunc(key, func(r rune) bool { return r <= ' ' || r >= 0x7f }):
		why = "the key holds a space, a control character or a non-ASCII character, which no bearer token can carry; check how it was read"
	}
	return option(why != "", func(c *Client) { c.apiKey = func(context.Context) string { return key } }, "WithAPIKey: %s", why)
}

// WithAPIKeyFunc sets a function that chooses the API key of each call
// from its context, for a program that calls the API on behalf of callers
// of its own: the key is what carries a caller's identity (see
// petstore.Principal) over HTTP. All the requests of one call use the key
// chosen once; an empty key sends no Authorization header.
func WithAPIKeyFunc(f func(ctx context.Context) string) Option {
	return option(f == nil, func(c *Client) { c.apiKey = f }, "WithAPIKeyFunc: the function is nil; use WithAPIKey for a fixed key")
}

// WithHTTPClient sets the http.Client that sends the requests, for its
// Transport, Timeout or CheckRedirect. The default is http.DefaultClient.
// New takes a copy of hc, which it does not change, whose CheckRedirect
// first refuses a redirect to another origin than the base URL's (see
// ErrRedirectRefused) and then asks hc's own.
func WithHTTPClient(hc *http.Client) Option {
	return option(hc == nil, func(c *Client) { c.hc = hc }, "WithHTTPClient: the client is nil; omit the option to use http.DefaultClient")
}

// WithRetries sets how many times a request is sent again after its first
// attempt when it may succeed later: one answered 503 or 429, a create
// answered 409 because the same create is still running, and one that
// failed in transport. Other answers are never retried. Zero turns retries
// off; the default is DefaultRetries.
func WithRetries(n int) Option {
	return option(n < 0, func(c *Client) { c.retries = n }, "WithRetries: %d is negative; use 0 to turn retries off", n)
}

// WithBackoff sets the waits between attempts: before the n-th retry, at
// random between half of and all of minWait·2ⁿ⁻¹, capped at maxWait. An
// answer with Retry-After is retried after that wait plus up to half as
// much again, and not at all when it asks for more than maxWait. When the
// caller's context would end first, the Client returns at once. The
// defaults are DefaultMinBackoff and DefaultMaxBackoff.
func WithBackoff(minWait, maxWait time.Duration) Option {
	return option(minWait <= 0 || maxWait < minWait, func(c *Client) { c.minBackoff, c.maxBackoff = minWait, maxWait },
		"WithBackoff: the waits %v and %v must be positive, the second at least the first; use e.g. %v and %v",
		minWait, maxWait, DefaultMinBackoff, DefaultMaxBackoff)
}

// WithTimeout sets how long one request may take, from sending it to
// reading the whole answer, so that a server that drips its answer cannot
// hold a call for ever. A request past it fails with an error that names
// WithTimeout and wraps context.DeadlineExceeded and
// petstore.ErrUnavailable, and is retried as any transport failure. Zero
// means no timeout; the default is DefaultTimeout.
func WithTimeout(d time.Duration) Option {
	return option(d < 0, func(c *Client) { c.timeout = d }, "WithTimeout: %v is negative; use 0 for no timeout, or e.g. %v", d, DefaultTimeout)
}
