package client

import (
	"context"
	"errors"
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
	// DefaultMaxListPets is the most pets that List collects when
	// ListOptions.Limit is 0, unless WithMaxListPets sets another.
	DefaultMaxListPets = 10_000
)

// WithAPIKey sets the API key that the Client sends with every request, as
// "Authorization: Bearer key". New needs it, or WithAPIKeyFunc, which
// chooses a key per call instead. Of WithAPIKey and WithAPIKeyFunc, the one
// given last applies.
func WithAPIKey(key string) Option {
	return optionFunc(func(c *Client) error {
		if err := checkKey(key); err != nil {
			return fmt.Errorf("WithAPIKey: %w", err)
		}
		c.apiKey = func(context.Context) string { return key }
		return nil
	})
}

// WithAPIKeyFunc sets a function that chooses the API key of each call of
// Add, Get, List and All from the call's context; all the requests of one
// call (its retries, the pages of a listing) use the key chosen once. An
// empty key sends no Authorization header.
//
// It serves a program that calls the API on behalf of several callers of
// its own, each with its own key: the server knows the caller only by the
// key, so it is the key that carries the caller's identity (a principal,
// see petstore.Principal) over HTTP. Idempotency keys, for one, are scoped
// by it. New needs it or WithAPIKey.
func WithAPIKeyFunc(f func(ctx context.Context) string) Option {
	return optionFunc(func(c *Client) error {
		if f == nil {
			return errors.New("WithAPIKeyFunc: the function is nil; use WithAPIKey for a fixed key")
		}
		c.apiKey = f
		return nil
	})
}

// checkKey reports why key cannot be sent as a bearer token.
func checkKey(key string) error {
	if key == "" {
		return errors.New("the key is empty; give the key that the server accepts, or omit the option")
	}
	if strings.IndexFunc(key, func(r rune) bool { return r <= ' ' || r >= 0x7f }) >= 0 {
		return errors.New("the key holds a space, a control character or a non-ASCII character, which no bearer token can carry; check how it was read")
	}
	return nil
}

// WithHTTPClient sets the http.Client that sends the requests, for its
// Transport (proxies, TLS settings, connection pools), its Timeout or its
// CheckRedirect. The default is http.DefaultClient.
//
// A Client never changes hc: New takes a copy of it (sharing its Transport
// and Jar) whose CheckRedirect first refuses every redirect to another
// origin than the base URL's, with an error wrapping ErrRedirectRefused,
// and then asks hc's own CheckRedirect, if any. So the API key goes to the
// base URL's scheme, host and port only, whatever hc allows; changes made
// to hc's fields after New do not apply. The timeout of WithTimeout applies
// too, through each request's context, beside hc.Timeout.
func WithHTTPClient(hc *http.Client) Option {
	return optionFunc(func(c *Client) error {
		if hc == nil {
			return errors.New("WithHTTPClient: the client is nil; omit the option to use http.DefaultClient")
		}
		c.hc = hc
		return nil
	})
}

// WithRetries sets how many times a request that may succeed later is sent
// again after its first attempt: one answered 503 or 429 (the caller is over
// its budget: nothing was done), a create answered 409
// because the same create is still running, and one that failed in
// transport (no answer, or a broken one). Other answers are never retried.
// Zero turns retries off. The default is DefaultRetries, 4, so at most five
// attempts.
func WithRetries(n int) Option {
	return optionFunc(func(c *Client) error {
		if n < 0 {
			return fmt.Errorf("WithRetries: %d is negative; use 0 to turn retries off", n)
		}
		c.retries = n
		return nil
	})
}

// WithBackoff sets the waits between attempts. The wait before the n-th
// retry is drawn at random between half of and all of minWait·2ⁿ⁻¹, capped
// at maxWait, so that many clients failing at once do not retry in step. An
// answer with Retry-After is retried after the wait it asks for plus up to
// half as much again, drawn at random for the same reason; when it asks for
// more than maxWait, the Client does not retry and returns the answer's
// error. No wait outlasts the caller's context: when the context would end
// first, the Client returns at once. The defaults are DefaultMinBackoff,
// 100 ms, and DefaultMaxBackoff, 10 s.
func WithBackoff(minWait, maxWait time.Duration) Option {
	return optionFunc(func(c *Client) error {
		if minWait <= 0 || maxWait < minWait {
			return fmt.Errorf("WithBackoff: the waits %v and %v must be positive, the second at least the first; use e.g. %v and %v",
				minWait, maxWait, DefaultMinBackoff, DefaultMaxBackoff)
		}
		c.minBackoff, c.maxBackoff = minWait, maxWait
		return nil
	})
}

// WithTimeout sets how long one request may take, from sending it to
// reading the whole answer, so that a server that answers slowly, or
// drips its answer a byte at a time, cannot hold a call for ever. A request
// past it fails with an error that names WithTimeout and wraps
// context.DeadlineExceeded and petstore.ErrUnavailable, and is retried as
// any transport failure (see WithRetries), so a call may last about
// (retries+1)·d plus the waits; the caller's context bounds the whole call.
// It applies through each request's context, also with an http.Client of
// WithHTTPClient, which it does not change. Zero means no timeout but the
// caller's context and the http.Client's own. The default is
// DefaultTimeout, 30 s.
func WithTimeout(d time.Duration) Option {
	return optionFunc(func(c *Client) error {
		if d < 0 {
			return fmt.Errorf("WithTimeout: %v is negative; use 0 for no timeout, or e.g. %v", d, DefaultTimeout)
		}
		c.timeout = d
		return nil
	})
}

// WithMaxListPets sets the most pets that List collects when
// ListOptions.Limit is 0. Past it, List returns an error wrapping
// ErrTooManyPets and no pets, rather than hold as many pets as a server
// sends: a server whose pages never end would otherwise fill the memory.
// With a Limit, List collects at most Limit pets, whatever this says. All
// holds one page at a time, and has no such bound. The default is
// DefaultMaxListPets, 10,000, which take about 1 MB with names of 20
// bytes, and about 12 MB with the longest names the API allows.
func WithMaxListPets(n int) Option {
	return optionFunc(func(c *Client) error {
		if n < 1 {
			return fmt.Errorf("WithMaxListPets: %d is not positive; give the most pets that List may return, or read them with All", n)
		}
		c.maxList = n
		return nil
	})
}
