package petstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// An Option configures the handler that New returns.
type Option interface {
	apply(*config) error
}

type optionFunc func(*config) error

func (f optionFunc) apply(c *config) error { return f(c) }

type config struct {
	store        Store
	auth         Authenticator
	basePath     string
	logger       *slog.Logger
	maxBody      int64
	bodyTimeout  time.Duration
	deprecation  time.Time
	sunset       time.Time
	retryAfter   time.Duration
	storeTimeout time.Duration
	openAPI      bool
	openAPIDoc   []byte  // the document served when openAPI is set, made by configure
	docs         []route // the page's files, nil when WithDocs is off
	observe      func(context.Context, Observation)
	credential   *Credential // nil for the bearer token
	watch        Watch
	rateLimit    RateLimit
}

// Defaults of the options.
const (
	DefaultBasePath     = "/v1"
	DefaultMaxBodyBytes = 64 << 10
	DefaultBodyTimeout  = 10 * time.Second
	DefaultRetryAfter   = time.Second
	DefaultStoreTimeout = 5 * time.Second

	// Defaults of Watch.
	DefaultWatchPoll              = time.Second
	DefaultWatchHeartbeat         = 15 * time.Second
	DefaultWatchWriteTimeout      = 10 * time.Second
	DefaultMaxStreams             = 1000
	DefaultMaxStreamsPerPrincipal = 100

	// DefaultLimiterKeys is the number of keys that a Limiter made by
	// NewLimiter with maxKeys 0 keeps budgets for.
	DefaultLimiterKeys = 100_000
)

func defaultConfig() config {
	c := config{
		basePath:     DefaultBasePath,
		logger:       slog.New(slog.DiscardHandler),
		maxBody:      DefaultMaxBodyBytes,
		bodyTimeout:  DefaultBodyTimeout,
		deprecation:  time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC),
		sunset:       time.Date(2030, time.December, 5, 0, 0, 0, 0, time.UTC),
		retryAfter:   DefaultRetryAfter,
		storeTimeout: DefaultStoreTimeout,
		openAPI:      true,
	}
	_ = WithWatch(Watch{}).apply(&c) // the defaults of Watch; no field is negative
	return c
}

// positive returns the option named name that calls set, or, when v is not
// positive, its error, which names a value such as def: a noun.
func positive[T int64 | time.Duration](name, noun string, v, def T, set func(*config)) Option {
	return optionFunc(func(c *config) error {
		if v <= 0 {
			return fmt.Errorf("%s: %v is not positive; use a %s such as %v", name, v, noun, def)
		}
		set(c)
		return nil
	})
}

// notNil returns the option that calls set, or, when v is nil, the error
// message.
func notNil[T comparable](v T, message string, set func(*config)) Option {
	return optionFunc(func(c *config) error {
		var none T
		if v == none {
			return errors.New(message)
		}
		set(c)
		return nil
	})
}

// WithStore sets the Store that keeps the pets. It is required: there is no
// default store (memstore.New gives an in-memory one).
func WithStore(s Store) Option {
	return notNil(s, "WithStore: the store is nil; pass a Store such as memstore.New()", func(c *config) { c.store = s })
}

// WithAuthenticator sets the Authenticator that checks every request's bearer
// token. It is required, so that a handler never serves without
// authentication by mistake; APIKeys gives one that accepts a fixed set of
// keys.
func WithAuthenticator(a Authenticator) Option {
	return notNil(a, "WithAuthenticator: the authenticator is nil; pass one such as petstore.APIKeys(key)", func(c *config) { c.auth = a })
}

// WithBasePath sets the path under which the handler serves the API, as it
// appears in the request URL that the handler sees: "/v1" (the default)
// serves /v1/pets and /v1/pets/{petId}. It begins with a slash and does not
// end with one; "" serves /pets, for a host that uses http.StripPrefix.
// Paths are matched exactly, as escaped in the URL, and never cleaned or
// redirected, so give the path escaped: "/M%C3%BCnchen", not "/München".
func WithBasePath(path string) Option {
	return optionFunc(func(c *config) error {
		if path != "" && !strings.HasPrefix(path, "/") {
			return fmt.Errorf("WithBasePath: %q does not begin with a slash; use %q", path, "/"+path)
		}
		if strings.HasSuffix(path, "/") {
			return fmt.Errorf("WithBasePath: %q ends with a slash; use %q", path, strings.TrimRight(path, "/"))
		}
		if strings.ContainsAny(path, "?#") {
			return fmt.Errorf("WithBasePath: %q holds a query or fragment; give only the path", path)
		}
		if u, err := url.Parse(path); err != nil || u.EscapedPath() != path {
			escaped := (&url.URL{Path: path}).EscapedPath()
			return fmt.Errorf("WithBasePath: %q is not a path as it appears in a request URL, so no request can match it; use %q", path, escaped)
		}
		c.basePath = path
		return nil
	})
}

// WithLogger sets the logger for failures that the client is not told the
// detail of: store errors, panics and authenticator failures. The default
// discards them.
func WithLogger(l *slog.Logger) Option {
	return notNil(l, "WithLogger: the logger is nil; omit the option to discard logs", func(c *config) { c.logger = l })
}

// WithMaxBodyBytes sets the largest request body that the handler reads;
// a larger one is answered 413 payload_too_large. The default is 64 KiB.
func WithMaxBodyBytes(n int64) Option {
	return positive("WithMaxBodyBytes", "limit", n, DefaultMaxBodyBytes, func(c *config) { c.maxBody = n })
}

// WithBodyTimeout sets how long the handler waits for the body of a create
// to arrive, from when it starts to read it, as the connection's read
// deadline in place of the server's ReadTimeout; a body that stops arriving
// is answered 400 invalid_body. The default is 10 seconds.
func WithBodyTimeout(d time.Duration) Option {
	return positive("WithBodyTimeout", "duration", d, DefaultBodyTimeout, func(c *config) { c.bodyTimeout = d })
}

// WithDeprecation sets the dates sent in the Deprecation and Sunset headers
// of GET /pets/{petId}: when the operation was deprecated and when it is to
// be removed. The defaults are 1 January 2026, 00:00 UTC, sent as
// "Deprecation: @1767225600" (RFC 9745), and the specification's removal
// date, sent as "Sunset: Thu, 05 Dec 2030 00:00:00 GMT" (RFC 8594).
func WithDeprecation(deprecated, sunset time.Time) Option {
	return optionFunc(func(c *config) error {
		if deprecated.IsZero() || sunset.IsZero() {
			return errors.New("WithDeprecation: a date is zero; give both dates")
		}
		if sunset.Before(deprecated) {
			return errors.New("WithDeprecation: the sunset is before the deprecation; swap the dates")
		}
		c.deprecation, c.sunset = deprecated, sunset
		return nil
	})
}

// WithRetryAfter sets the delay that 503 responses advise in their
// Retry-After header, rounded up to whole seconds. The default is one second.
func WithRetryAfter(d time.Duration) Option {
	return positive("WithRetryAfter", "delay", d, DefaultRetryAfter, func(c *config) { c.retryAfter = d })
}

// WithStoreTimeout sets the deadline of every call that the handler makes to
// the Store. Past it, the call's context is done, and the request is
// answered 503 unavailable with Retry-After and logged at WARN. The default
// is DefaultStoreTimeout, 5 seconds.
//
// A create, once it reaches the store, runs under this deadline alone: a
// client that hangs up does not cancel it half-way. A store that keeps the
// Store contract stores nothing for a create that fails with the deadline,
// so that 503 means no pet was created. Keep the deadline below the
// server's WriteTimeout, so that the client hears the 503.
func WithStoreTimeout(d time.Duration) Option {
	return positive("WithStoreTimeout", "deadline", d, DefaultStoreTimeout, func(c *config) { c.storeTimeout = d })
}

// WithOpenAPI sets whether the handler serves the OpenAPI 3.0.3 document of
// the API at the base path followed by /openapi.json, with its server URL set
// to the base path ("/" when that is empty). The default is true.
//
// The document holds no data and is served without authentication, to GET
// and HEAD, and any other method gets 405 with Allow. With
// WithOpenAPI(false) the path is unknown, answered 404 after authentication.
func WithOpenAPI(serve bool) Option {
	return optionFunc(func(c *config) error {
		c.openAPI = serve
		return nil
	})
}

// WithDocs serves an interactive documentation page for the handler's
// OpenAPI document, made of the files of page, at the base path followed by
// /docs ("/v1/docs" by default): page's index.html there and each other
// file below it, as in "/v1/docs/swagger-ui.css". The page is off by
// default, and a nil page turns it off. Package
// [github.com/petstore-go/petstore/docspage] holds Swagger UI's page, for
// WithDocs(docspage.Files()); petstore does not import it.
//
// Like the document, the files are served without authentication, with a
// strong ETag, under a Content-Security-Policy that allows only the page's
// own origin: page holds everything it loads, with no inline script or
// style.
//
// New reads page's files, and reports an error when page has no
// index.html, when it holds a file other than .html, .js, .css or .png, or
// with WithOpenAPI(false), since the page reads the document.
func WithDocs(page fs.FS) Option {
	return optionFunc(func(c *config) (err error) {
		c.docs = nil
		if page != nil {
			c.docs, err = docsRoutes(page)
		}
		return err
	})
}

// A Credential says where the handler finds the credential of a request
// and what its 401 answers say (see WithCredential). Every field is
// required.
type Credential struct {
	// From returns the credential that r carries, or "" when it carries
	// none. The handler passes it to the Authenticator as the token, scrubs
	// it from what it logs and, when the Authenticator names no principal,
	// names the caller by its fingerprint. From is called from the request's
	// goroutine, perhaps more than once per request, and must be safe for
	// concurrent use.
	From func(r *http.Request) string
	// Challenge is the value of the WWW-Authenticate header of both 401
	// answers, which RFC 9110 requires, such as `TeamToken realm="petstore"`.
	Challenge string
	// Missing is the message of the 401 to a request without a credential:
	// what is missing and how to send it.
	Missing string
	// Rejected is the message of the 401 to a request whose credential the
	// Authenticator rejected.
	Rejected string
}

// WithCredential sets where the handler finds each request's credential and
// what its 401 answers say, for a host whose callers do not send
// "Authorization: Bearer KEY": a header of its own, a cookie, or a client
// certificate's name. The default reads the bearer token of the
// Authorization header (RFC 6750) and answers 401 with
// `WWW-Authenticate: Bearer realm="petstore"` (and error="invalid_token" for
// a rejected token). With c, the Authorization header is ignored. The
// served OpenAPI document and docs page describe bearer authentication, so
// New refuses WithCredential unless WithOpenAPI(false) turns them off.
func WithCredential(c Credential) Option {
	return optionFunc(func(cfg *config) error {
		var missing []string
		need := func(unset bool, field string) {
			if unset {
				missing = append(missing, field)
			}
		}
		need(c.From == nil, "From (the function that reads a request's credential)")
		need(c.Challenge == "", "Challenge (the WWW-Authenticate value, such as `TeamToken realm=\"petstore\"`)")
		need(c.Missing == "", "Missing (the message of a 401 without a credential)")
		need(c.Rejected == "", "Rejected (the message of a 401 with a rejected credential)")
		if len(missing) > 0 {
			return fmt.Errorf("WithCredential: set %s", strings.Join(missing, ", "))
		}
		if strings.ContainsFunc(c.Challenge, func(r rune) bool { return r < ' ' && r != '\t' || r == 0x7f }) {
			return fmt.Errorf("WithCredential: the Challenge %q cannot be a header value; remove its control characters", c.Challenge)
		}
		cfg.credential = &c
		return nil
	})
}
