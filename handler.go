package petstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/petstore-go/petstore/httpapi"
	"github.com/petstore-go/petstore/internal/body"
	"github.com/petstore-go/petstore/internal/clip"
	"github.com/petstore-go/petstore/internal/options"
)

// New returns an http.Handler that serves the animal store API under the
// base path (see WithBasePath) on the configured Store, behind the
// configured Authenticator. WithStore and WithAuthenticator are required.
//
// New reports every configuration mistake as an error that names the option
// that fixes it. It registers nothing globally: two handlers share nothing.
func New(opts ...Option) (http.Handler, error) {
	c, errs := configure(opts)
	if c.store == nil {
		errs = append(errs, errors.New("no store: add WithStore(memstore.New()) or another Store"))
	}
	if c.auth == nil {
		errs = append(errs, errors.New("no authenticator: add WithAuthenticator(petstore.APIKeys(key)) or another Authenticator"))
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("petstore.New: %w", errors.Join(errs...))
	}
	return newHandler(&c), nil
}

// CheckOptions returns the error that New would return for opts, word for
// word, but without the mistake of a missing store or authenticator; it
// returns nil when opts have no other mistake. A host calls it to refuse a
// wrong configuration before it opens the Store (a database, say) that it
// then passes to New with the same options.
func CheckOptions(opts ...Option) error {
	if _, errs := configure(opts); len(errs) > 0 {
		return fmt.Errorf("petstore.New: %w", errors.Join(errs...))
	}
	return nil
}

// configure applies opts to the defaults and returns the configuration with
// every mistake in it, but for a missing store or authenticator.
func configure(opts []Option) (config, []error) {
	c := defaultConfig()
	var errs []error
	if err := options.Apply(&c, opts, Option.apply); err != nil {
		errs = append(errs, err)
	}
	if a, ok := c.auth.(apiKeys); ok {
		if err := a.check(); err != nil {
			errs = append(errs, err)
		}
	}
	if c.credential != nil && c.openAPI {
		errs = append(errs, errors.New("WithCredential: the served OpenAPI document and docs page describe the bearer token, which this credential replaces; "+
			"add WithOpenAPI(false) and serve a document of your own"))
	}
	if c.docs != nil && !c.openAPI {
		errs = append(errs, errors.New("WithDocs: the page reads the OpenAPI document; drop WithOpenAPI(false)"))
	}
	if c.openAPI {
		c.openAPIDoc = openAPIDocumentFor(c.basePath)
	}
	return c, errs
}

// newHandler returns the handler of a configuration without mistakes.
func newHandler(c *config) *handler {
	cred := credentialAnswers{challengeNone: challengeNone, challengeReject: challengeReject,
		missing:   "an API key is required; send it in the header Authorization: Bearer KEY",
		rejected:  "the API key is not valid; send a valid one in the header Authorization: Bearer KEY",
		forbidden: "the API key is valid but may not perform "}
	if c.credential != nil {
		challenge := []string{c.credential.Challenge}
		cred = credentialAnswers{from: c.credential.From, challengeNone: challenge, challengeReject: challenge,
			missing: c.credential.Missing, rejected: c.credential.Rejected, forbidden: "the credential is valid but may not perform "}
	}
	h := &handler{
		credential:  cred,
		store:       guardedStore{s: c.store, timeout: c.storeTimeout},
		auth:        c.auth,
		log:         c.logger,
		maxBody:     c.maxBody,
		bodyTimeout: c.bodyTimeout,
		router:      newRouter(c.basePath, handlerRoutes(c)),
		openAPI:     c.openAPIDoc,
		running:     inFlight{max: 1, full: ErrIdempotencyKeyInUse, busy: map[string]int{}},
		petsPath:    c.basePath + "/pets",
		observe:     c.observe,
		rateLimit:   newRateLimits(c.rateLimit),
		retryAfter:  []string{strconv.FormatInt(seconds(c.retryAfter), 10)},
		deprecation: []string{"@" + strconv.FormatInt(c.deprecation.Unix(), 10)}, // RFC 9745
		sunset:      []string{c.sunset.UTC().Format(http.TimeFormat)},            // RFC 8594
	}
	h.inFlight = newInFlight(c.rateLimit.MaxInFlight, h.retryAfter)
	h.hub = newHub(c.watch, &h.store, c.logger)
	return h
}

// handler serves the API. Everything in it is set by New and read-only
// afterwards, except the idempotency keys of the creates in progress.
type handler struct {
	credential  credentialAnswers
	store       guardedStore
	auth        Authenticator
	log         *slog.Logger
	maxBody     int64
	bodyTimeout time.Duration
	buffers     body.Pool
	router      router
	openAPI     []byte // the document that serveOpenAPI serves

	// running holds the idempotency keys of the creates in progress, by
	// principal, so that a second request with the same key from the same
	// caller is answered 409 instead of waiting on the store. Across
	// processes, the store's own guarantee (Store, "Idempotent creates")
	// keeps a key to one pet.
	running  inFlight
	petsPath string // base + "/pets", for messages
	observe  func(context.Context, Observation)
	hub      *hub // the watch streams of GET /pets

	rateLimit rateLimits // the callers' budgets, if any
	inFlight  *inFlight  // the requests of each caller in flight, or nil for no bound

	// Header values that depend on the options, shared by all responses.
	retryAfter, deprecation, sunset []string
}

// Header values that every handler shares. They are never modified.
var (
	acceptPost         = []string{"application/json"}
	connectionClose    = []string{"close"}
	idempotentReplayed = []string{"true"}
	successor          = []string{`<../pets>; rel="successor-version"`}
	challengeNone      = []string{`Bearer realm="petstore"`}
	challengeReject    = []string{`Bearer realm="petstore", error="invalid_token"`}
)

// ServeHTTP answers a request: it finds the route, authenticates the caller
// for the route's operation (so that a caller without a valid key learns
// nothing about paths or methods), and serves the operation. Every failure
// on the way is an error that fail answers. With an observer, it then
// describes the request to it.
func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var d dispatch
	if h.observe == nil {
		h.serve(w, r, &d)
		return
	}
	start := time.Now()
	ow := &observedWriter{ResponseWriter: w}
	defer func() { h.observe(r.Context(), d.observation(r, ow.status, time.Since(start))) }()
	h.serve(ow, r, &d)
}

// A dispatch is what serve learned of a request on its way: what an
// Observation reports beside the status and the duration.
type dispatch struct {
	route  *route          // the route that answered, or nil
	res    *resource       // the resource of the path, or nil for an unknown path
	caller context.Context // the authenticated caller's context, or nil
	code   httpapi.Code    // the error code of the answer, or "" for a success
}

// observation describes the request r that d dispatched, answered with
// status after elapsed. It is the one place where an Observation is made.
func (d *dispatch) observation(r *http.Request, status int, elapsed time.Duration) Observation {
	o := Observation{Method: clip.String(r.Method), Status: status, Code: d.code, Duration: elapsed}
	if d.res != nil {
		o.Route = d.res.template
	}
	if d.route != nil {
		o.Operation, o.Deprecated = d.route.op, d.route.deprecated
	}
	if d.caller != nil {
		o.Principal = Principal(d.caller)
	}
	return o
}

// serve answers r, recording in d what it learns on the way.
func (h *handler) serve(w http.ResponseWriter, r *http.Request, d *dispatch) {
	defer func() {
		if v := recover(); v != nil {
			h.panicked(w, r, v)
			d.code = httpapi.CodeInternal
		}
	}()
	rt, res, params := h.router.match(r.Method, r.URL.EscapedPath())
	d.route, d.res = rt, res
	op := OpNone
	if rt != nil {
		op = rt.op
	}
	if res != nil {
		r.Pattern = res.template // for a host's middleware, as net/http.ServeMux sets it
	}
	ctx := r.Context()
	var err error
	if res == nil || !res.public {
		d.caller, err = h.authenticate(ctx, op, r)
		if d.caller != nil {
			ctx = d.caller
		}
	}
	switch {
	case err != nil:
	case rt != nil:
		if rt.deprecated {
			hdr := w.Header()
			hdr["Deprecation"] = h.deprecation
			hdr["Sunset"] = h.sunset
			hdr["Link"] = successor
		}
		if d.caller != nil && h.inFlight != nil && !(op == OpListPets && wantsStream(r)) { // streams have caps of their own
			p := Principal(ctx)
			if err = h.inFlight.take(p); err == nil {
				defer h.inFlight.done(p)
			}
		}
		if d.caller != nil && err == nil {
			err = h.limit(ctx, w, op)
		}
		if err == nil {
			err = rt.serve(h, ctx, w, r, params)
		}
	case res != nil:
		err = &requestError{code: httpapi.CodeMethodNotAllowed, header: "Allow", value: res.allow,
			message: "method " + clip.String(r.Method) + " is not allowed here; use one of " + res.allow[0]}
	default:
		err = &requestError{code: httpapi.CodeNotFound, message: h.router.notFound}
	}
	if err != nil {
		if e, ok := err.(*requestError); ok && e.code == httpapi.CodeRateLimited {
			h.rateLimit.wait(ctx)
		}
		d.code = h.fail(w, r, op, err)
	}
}

// authenticate asks the Authenticator whether the request's credential (its
// bearer token, unless WithCredential says otherwise) may perform op. It
// returns the context for the operations and the store: the one that the
// Authenticator returned, carrying the caller's principal, which is a
// fingerprint of the credential when the Authenticator named none.
func (h *handler) authenticate(ctx context.Context, op Operation, r *http.Request) (context.Context, error) {
	token, err := h.token(r)
	if err != nil {
		return nil, err
	}
	authCtx, err := h.auth.Authenticate(ctx, op, token)
	switch {
	case err == nil && authCtx != nil:
		ctx = authCtx
	case err == nil:
	case errors.Is(err, ErrUnauthorized), errors.Is(err, ErrForbidden):
		return nil, err
	default:
		return nil, authenticatorError{err}
	}
	if Principal(ctx) == "" {
		ctx = WithPrincipal(ctx, tokenPrincipal(token))
	}
	return ctx, nil
}

// credentialAnswers is where the handler finds a request's credential and
// how it answers a request without a valid one (see WithCredential).
type credentialAnswers struct {
	from                           func(*http.Request) string // nil for the bearer token
	challengeNone, challengeReject []string                   // WWW-Authenticate of the 401s, shared
	missing, rejected              string                     // the messages of the 401s
	forbidden                      string                     // the start of the 403's message, before the operation
}

// token returns the credential of r: its bearer token, or what the host's
// Credential.From returns. The error is httpapi.ErrNoCredentials for none,
// or httpapi.ErrMalformedToken for a bearer token that cannot be valid.
func (h *handler) token(r *http.Request) (string, error) {
	if h.credential.from == nil {
		return httpapi.BearerToken(r)
	}
	if t := h.credential.from(r); t != "" {
		return t, nil
	}
	return "", httpapi.ErrNoCredentials
}

// panicked logs a panic with its stack and answers 500. A panic with
// http.ErrAbortHandler is passed on, as net/http expects.
func (h *handler) panicked(w http.ResponseWriter, r *http.Request, v any) {
	if v == http.ErrAbortHandler {
		panic(v)
	}
	token, _ := h.token(r)
	h.log.LogAttrs(r.Context(), slog.LevelError, "petstore: panic serving request",
		slog.String("method", clip.String(r.Method)), slog.String("path", clip.String(r.URL.Path)),
		slog.String("panic", scrub(fmt.Sprint(v), token)), slog.String("stack", string(debug.Stack())))
	httpapi.WriteError(w, r, httpapi.CodeInternal, "internal error")
}

// scrub removes token from s, so that a credential never reaches a log even
// when an Authenticator or a Store puts it into an error or a panic.
func scrub(s, token string) string {
	if token == "" {
		return s
	}
	return strings.ReplaceAll(s, token, "[REDACTED]")
}
