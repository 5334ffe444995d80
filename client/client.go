package client

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/httpapi"
	"github.com/petstore-go/petstore/internal/options"
)

// A Client calls the animal store API at one base URL. It implements
// petstore.Store, so the conformance suite petstoretest.TestStore runs
// against it, and a program can swap it for any other Store. Make one with
// New; the zero Client is not usable. A Client is safe for concurrent use
// by multiple goroutines.
type Client struct {
	base     *url.URL // the base URL, without a trailing slash
	pets     string   // the URL of the list of pets
	hc       *http.Client
	apiKey   func(context.Context) string // nil: no key
	retries  int
	pageSize int
	origin   string        // the base URL's origin (see origin)
	timeout  time.Duration // of one request; 0 for none
	maxList  int           // the most pets that List collects without a Limit
	empty    *emptyBudgets // the budgets to wait for, with WithWaitForBudget; nil without

	minBackoff, maxBackoff time.Duration

	// sleep waits d or until ctx is done, and reports ctx.Err() in the
	// latter case. Tests replace it to see the waits without waiting.
	sleep func(ctx context.Context, d time.Duration) error
}

var _ petstore.Store = (*Client)(nil)

// ErrNoAPIKey is wrapped by the error of New when neither WithAPIKey nor
// WithAPIKeyFunc is given.
var ErrNoAPIKey = errors.New("client: no API key")

// New returns a Client of the API served at baseURL, with its base path,
// such as "https://pets.example.com/v1". It needs WithAPIKey or
// WithAPIKeyFunc, and reports every mistake in baseURL or in the options as
// an error that names the fix.
func New(baseURL string, opts ...Option) (*Client, error) {
	base, err := parseBase(baseURL)
	if err != nil {
		return nil, err
	}
	c := &Client{
		base:       base,
		pets:       base.String() + "/pets",
		hc:         http.DefaultClient,
		retries:    DefaultRetries,
		pageSize:   petstore.MaxPageSize,
		origin:     origin(base),
		timeout:    DefaultTimeout,
		maxList:    MaxListPets,
		minBackoff: DefaultMinBackoff,
		maxBackoff: DefaultMaxBackoff,
		sleep:      sleep,
	}
	err = options.Apply(c, opts, Option.apply)
	if c.apiKey == nil {
		err = errors.Join(err, fmt.Errorf("%w: pass WithAPIKey(key), or WithAPIKeyFunc to choose a key per call; "+
			"the server answers every request without one with 401", ErrNoAPIKey))
	}
	if err != nil {
		return nil, fmt.Errorf("client.New: %w", err)
	}
	c.hc = c.guard(c.hc)
	return c, nil
}

// parseBase checks the base URL and returns it without a trailing slash.
func parseBase(raw string) (*url.URL, error) {
	const example = "https://pets.example.com/v1"
	u, err := url.Parse(raw)
	switch {
	case raw == "":
		return nil, fmt.Errorf("client.New: the base URL is empty; give the URL the API is served under, such as %s", example)
	case err != nil:
		return nil, fmt.Errorf("client.New: the base URL %q does not parse (%v); give one such as %s", raw, err, example)
	case u.Scheme != "http" && u.Scheme != "https" || u.Host == "":
		return nil, fmt.Errorf("client.New: the base URL %q is not an absolute http or https URL; give one such as %s", raw, example)
	case u.User != nil:
		return nil, fmt.Errorf("client.New: the base URL holds a user or password; remove it and pass the API key with WithAPIKey")
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		return nil, fmt.Errorf("client.New: the base URL %q holds a query or fragment; give the scheme, host and base path only, such as %s", raw, example)
	}
	u.Path, u.RawPath = strings.TrimSuffix(u.Path, "/"), strings.TrimSuffix(u.RawPath, "/")
	return u, nil
}

// sleep waits d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-time.After(d):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Limits on what the Client reads of an answer. The largest pet that the
// API allows, a name of 256 characters each escaped as a surrogate pair
// ("\uXXXX\uXXXX"), takes about 3.2 KB of JSON.
const (
	maxPetBytes       = 64 << 10 // one pet, of Add and Get
	maxPageOverhead   = 64 << 10 // a page: this, plus maxPagePetBytes a pet (464 KiB for 100)
	maxPagePetBytes   = 4 << 10
	maxErrorBodyBytes = 64 << 10 // error bodies are short
)

// A call is one operation: the requests it sends, with their retries, share
// its API key and, for a create, its idempotency key.
type call struct {
	ctx    context.Context
	method string
	key    string // the API key, "" for none
	body   []byte // the request body, nil for none
	idem   string // the Idempotency-Key, "" for none
	limit  int64  // the most bytes read of a successful answer
}

// newCall starts a call of method under ctx.
func (c *Client) newCall(ctx context.Context, method string) *call {
	cl := &call{ctx: ctx, method: method, limit: maxPetBytes}
	if c.apiKey != nil {
		cl.key = c.apiKey(ctx)
	}
	return cl
}

// An answer is a successful response: its header and body.
type answer struct {
	header http.Header
	body   []byte
}

// do sends the call's request to target until it is answered with the
// status want, retrying what WithRetries says, and returns the answer. An
// error answer gives an error that wraps an *Error, a failure to reach the
// server one that wraps petstore.ErrUnavailable and the failure.
func (c *Client) do(cl *call, target string, want int) (answer, error) {
	var last error // the error of the latest attempt
	for attempt := 0; ; attempt++ {
		if err := c.waitForBudget(cl); err != nil {
			return answer{}, c.ctxError(cl, target, err, last)
		}
		ans, status, err := c.send(cl, target)
		var budget *Budget
		if err == nil && (status != want || c.empty != nil) {
			budget = parseBudget(ans.header)
			c.empty.note(cl, budget)
		}
		if err == nil && status == want {
			return ans, nil
		}
		var retryAfter time.Duration
		var retry bool
		switch {
		case err != nil && cl.ctx.Err() != nil:
			return answer{}, c.ctxError(cl, target, cl.ctx.Err(), last)
		case errors.Is(err, ErrBadResponse) || errors.Is(err, ErrRedirectRefused):
			// The server answered, with what the client does not take:
			// not a failure to reach it, and not one that a retry mends.
			var ue *url.Error
			if errors.As(err, &ue) {
				err = ue.Err // without the request's URL, which follows
			}
			return answer{}, fmt.Errorf("client: %s %s: %w", cl.method, target, err)
		case err != nil:
			last = fmt.Errorf("client: %s %s: %w: %w", cl.method, target, petstore.ErrUnavailable, err)
			retry = transient(err)
		default:
			e := errorAnswer(status, ans.body)
			retryAfter = parseRetryAfter(ans.header.Get("Retry-After"))
			e.RetryAfter, e.Budget = retryAfter, budget
			last = fmt.Errorf("client: %s %s: %w", cl.method, target, e)
			retry = status == http.StatusServiceUnavailable || status == http.StatusTooManyRequests ||
				status == http.StatusConflict && cl.idem != "" && e.Code == httpapi.CodeIdempotencyKeyInUse
		}
		if !retry || attempt >= c.retries {
			if retry && attempt > 0 {
				return answer{}, fmt.Errorf("%w (after %d attempts)", last, attempt+1)
			}
			return answer{}, last
		}
		if retryAfter > c.maxBackoff {
			return answer{}, last // the server asks for a longer wait than the caller allows
		}
		wait := c.backoff(attempt, retryAfter)
		if deadline, ok := cl.ctx.Deadline(); ok && time.Until(deadline) < wait {
			return answer{}, last // the context would end before the retry
		}
		if err := c.sleep(cl.ctx, wait); err != nil {
			return answer{}, c.ctxError(cl, target, err, last)
		}
	}
}

// ctxError is the error of a call whose context is done, with the error of
// the latest attempt, if any.
func (c *Client) ctxError(cl *call, target string, err, last error) error {
	if last != nil {
		return fmt.Errorf("client: %s %s: %w (the latest attempt: %w)", cl.method, target, err, last)
	}
	return fmt.Errorf("client: %s %s: %w", cl.method, target, err)
}

// send sends one request and reads its answer, within the timeout of one
// request (see WithTimeout). It returns an error only when no whole answer
// arrived, or one too large to read (wrapping ErrBadResponse).
func (c *Client) send(cl *call, target string) (_ answer, _ int, err error) {
	ctx := cl.ctx
	if c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
		defer func() {
			if err != nil && ctx.Err() != nil && cl.ctx.Err() == nil {
				err = fmt.Errorf("no whole answer within %v, the timeout of one request (see WithTimeout): %w", c.timeout, err)
			}
		}()
	}
	req, err := cl.request(ctx, target, "application/json")
	if err != nil {
		return answer{}, 0, err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return answer{}, 0, err
	}
	defer resp.Body.Close()
	limit := cl.limit
	if resp.StatusCode >= 300 {
		limit = maxErrorBodyBytes
	}
	b, err := readBody(resp, limit)
	if err != nil {
		return answer{}, 0, err
	}
	return answer{header: resp.Header, body: b}, resp.StatusCode, nil
}

// request returns a request of cl to target, under ctx, that accepts the
// media type accept.
func (cl *call) request(ctx context.Context, target, accept string) (*http.Request, error) {
	var body io.Reader
	if cl.body != nil {
		body = bytes.NewReader(cl.body)
	}
	req, err := http.NewRequestWithContext(ctx, cl.method, target, body)
	if err != nil {
		return nil, err
	}
	req.Header = http.Header{"Accept": {accept}, "User-Agent": {"petstore-go-client"}}
	if cl.key != "" {
		req.Header["Authorization"] = []string{"Bearer " + cl.key}
	}
	if cl.body != nil {
		req.Header["Content-Type"] = []string{"application/json"}
	}
	if cl.idem != "" {
		req.Header["Idempotency-Key"] = []string{cl.idem}
	}
	return req, nil
}

// readBody reads the body of resp, up to limit bytes.
func readBody(resp *http.Response, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%w: the answer's body is over %d bytes, the most the client reads of this answer; check the base URL", ErrBadResponse, limit)
	}
	return b, nil
}

// transient reports whether a request that failed in transport with err
// may succeed when sent again: anything but a refused certificate.
func transient(err error) bool {
	var cert *tls.CertificateVerificationError
	return !errors.As(err, &cert)
}

// backoff returns the wait before retry number attempt+1, after an answer
// whose Retry-After asked for retryAfter, or 0 for none.
func (c *Client) backoff(attempt int, retryAfter time.Duration) time.Duration {
	if retryAfter > 0 {
		// Retry-After is the least wait. Clients told the same wait
		// at once would retry in step and collide again (a create's
		// 409s would let one through per round), so add up to half as
		// much again at random.
		return retryAfter + rand.N(retryAfter/2+1)
	}
	d := c.maxBackoff
	if attempt < 32 {
		d = min(c.minBackoff<<attempt, c.maxBackoff)
	}
	if d <= 0 { // overflow
		d = c.maxBackoff
	}
	return d/2 + rand.N(d/2+1)
}

// parseRetryAfter returns the wait that a Retry-After header asks for, in
// delay-seconds or as an HTTP date, or 0 when it asks for none.
func parseRetryAfter(v string) time.Duration {
	if s, err := strconv.ParseUint(v, 10, 32); err == nil {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0)
	}
	return 0
}

// origin returns the origin of u as the client compares it: the scheme, the
// host in lower case and the port, the scheme's default port when u names
// none, as in "https://pets.example.com:443".
func origin(u *url.URL) string {
	scheme, port := strings.ToLower(u.Scheme), u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[scheme]
	}
	return scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// maxRedirects is how many redirects in a row the client follows when the
// caller's http.Client sets no CheckRedirect: net/http's default.
const maxRedirects = 10

// guard returns a copy of hc whose CheckRedirect refuses a redirect to any
// origin but the base URL's, and otherwise asks hc's own CheckRedirect, or
// applies net/http's default of at most ten redirects. hc itself is not
// changed.
//
// net/http keeps the Authorization header on a redirect to the same host
// name whatever its port and scheme, so without this check the API key
// would follow a redirect to another port, or from https to plain http.
func (c *Client) guard(hc *http.Client) *http.Client {
	g := *hc
	own := hc.CheckRedirect
	g.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if to := origin(req.URL); to != c.origin {
			why := "the client sends its requests, and the API key, to that origin only"
			if c.base.Scheme == "https" && strings.EqualFold(req.URL.Scheme, "http") {
				why = "the client never follows https to http, which would send the request and the API key in clear text"
			}
			return fmt.Errorf("%w: the server redirects to %s, not the base URL's origin %s (scheme, host and port): %s",
				ErrRedirectRefused, cut(to), c.origin, why)
		}
		if own != nil {
			return own(req, via)
		}
		if len(via) >= maxRedirects {
			return fmt.Errorf("stopped after %d redirects", maxRedirects)
		}
		return nil
	}
	return &g
}
