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
	"sync"
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

// errNoKey is New's error without a key: ErrNoAPIKey and the fix.
var errNoKey = fmt.Errorf("%w: pass WithAPIKey(key), or WithAPIKeyFunc to choose a key per call; "+
	"the server answers every request without one with 401", ErrNoAPIKey)

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
		err = errors.Join(err, errNoKey)
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
		wait := c.backoff(attempt)
		if retryAfter > 0 {
			if retryAfter > c.maxBackoff {
				return answer{}, last // the server asks for a longer wait than the caller allows
			}
			// Retry-After is the least wait. Clients told the same wait
			// at once would retry in step and collide again (a create's
			// 409s would let one through per round), so add up to half as
			// much again at random.
			wait = retryAfter + rand.N(retryAfter/2+1)
		}
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

// backoff returns the wait before retry number attempt+1.
func (c *Client) backoff(attempt int) time.Duration {
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
	why := "the key is empty; give the key that the server accepts, or omit the option"
	if key != "" {
		why = "the key holds a space, a control character or a non-ASCII character, which no bearer token can carry; check how it was read"
	}
	bad := key == "" || strings.ContainsFunc(key, func(r rune) bool { return r <= ' ' || r >= 0x7f })
	return option(bad, func(c *Client) { c.apiKey = func(context.Context) string { return key } }, "WithAPIKey: %s", why)
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

// A Budget is what an answer said of the caller's budget of requests, in
// its RateLimit and RateLimit-Policy header fields (see
// petstore.WithRateLimit).
type Budget struct {
	// Policy is the budget's name: "reads" for listing and getting, and
	// "creates" for creating, on the library's handler.
	Policy string
	// Quota and Window are the policy's q and w: the requests the budget
	// holds when full, and the time an empty budget takes to fill. They
	// are 0 when the answer had no RateLimit-Policy of that name.
	Quota  int
	Window time.Duration
	// Remaining is the requests the budget holds now (r), and Reset the
	// time until it holds one more (t), rounded up to whole seconds.
	Remaining int
	Reset     time.Duration
}

// WithWaitForBudget makes the Client wait before a request that its
// budget would refuse, rather than after a 429: once an answer says that a
// budget holds no request (r=0 in its RateLimit field), the next request of
// that budget and API key waits the answer's reset (t) first, unless the
// call's context ends or the reset is longer than the longest wait of
// WithBackoff.
func WithWaitForBudget() Option {
	return option(false, func(c *Client) { c.empty = &emptyBudgets{until: map[budgetKey]time.Time{}} }, "")
}

// emptyBudgets holds, for WithWaitForBudget, the budgets that the latest
// answer found empty and until when: only those, so it holds no more
// entries than the callers that are out of budget at once.
type emptyBudgets struct {
	mu    sync.Mutex
	until map[budgetKey]time.Time
}

// A budgetKey names a budget by the API key that spends it and the method
// of its requests: on the library's handler, GET for reads and POST for
// creates.
type budgetKey struct{ apiKey, method string }

// note records what an answer to cl, arrived now, said of its budget b,
// if e and b are not nil.
func (e *emptyBudgets) note(cl *call, b *Budget) {
	if e == nil || b == nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	k := budgetKey{cl.key, cl.method}
	if b.Remaining > 0 || b.Reset <= 0 {
		delete(e.until, k)
		return
	}
	e.until[k] = time.Now().Add(b.Reset)
}

// waitForBudget returns cl's context's error if it is done, and otherwise
// waits, with WithWaitForBudget, until the budget of cl's request holds
// one, or until cl's context is done, unless that is longer than the
// longest wait between attempts.
func (c *Client) waitForBudget(cl *call) error {
	if err := cl.ctx.Err(); err != nil || c.empty == nil {
		return err
	}
	e, k := c.empty, budgetKey{cl.key, cl.method}
	e.mu.Lock()
	d := time.Until(e.until[k]) // far below 0 without an entry
	if d <= 0 {
		delete(e.until, k)
	}
	e.mu.Unlock()
	if d > 0 && d <= c.maxBackoff {
		return c.sleep(cl.ctx, d)
	}
	return nil
}

// parseBudget returns the budget that the first item of h's RateLimit
// field describes, with the RateLimit-Policy item of the same name, or nil
// when h has no RateLimit field that the client understands.
func parseBudget(h http.Header) *Budget {
	name, params, ok := parseItem(h.Get("RateLimit"))
	r, okR := params["r"]
	t, okT := params["t"]
	if !ok || !okR || !okT {
		return nil
	}
	b := &Budget{Policy: name, Remaining: int(r), Reset: time.Duration(t) * time.Second}
	for _, item := range h.Values("RateLimit-Policy") {
		for item := range strings.SplitSeq(item, ",") {
			if n, p, ok := parseItem(item); ok && n == name {
				b.Quota, b.Window = int(p["q"]), time.Duration(p["w"])*time.Second
			}
		}
	}
	return b
}

// parseItem parses the first item of a structured field list whose items
// are a string with integer parameters, such as `"reads";r=12;t=1`. It
// keeps the parameters that are integers from 0 to 2³¹−1.
func parseItem(v string) (name string, params map[string]int64, ok bool) {
	item, _, _ := strings.Cut(v, ",")
	parts := strings.Split(strings.TrimSpace(item), ";")
	name, quoted := strings.CutPrefix(parts[0], `"`)
	if name, ok = strings.CutSuffix(name, `"`); !quoted || !ok || name == "" || strings.ContainsAny(name, `"\`) {
		return "", nil, false
	}
	params = map[string]int64{}
	for _, p := range parts[1:] {
		k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
		if n, err := strconv.ParseInt(v, 10, 32); err == nil && n >= 0 {
			params[k] = n
		}
	}
	return name, params, true
}
