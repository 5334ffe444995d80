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

	"github.com/petstore-go/petstore/httpapi"
)

// New returns an http.Handler that serves the animal store API under the
// base path (see WithBasePath) on the configured Store, behind the
// configured Authenticator. WithStore and WithAuthenticator are required.
//
// New reports every configuration mistake as an error that names the option
// that fixes it. It registers nothing globally: two handlers share nothing.
func New(opts ...Option) (http.Handler, error) {
	c := defaultConfig()
	var errs []error
	for _, o := range opts {
		if o == nil {
			errs = append(errs, errors.New("petstore.New: an option is nil"))
			continue
		}
		if err := o.apply(&c); err != nil {
			errs = append(errs, err)
		}
	}
	if c.store == nil {
		errs = append(errs, errors.New("no store: add WithStore(memstore.New()) or another Store"))
	}
	if c.auth == nil {
		errs = append(errs, errors.New("no authenticator: add WithAuthenticator(petstore.APIKeys(key)) or another Authenticator"))
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("petstore.New: %w", errors.Join(errs...))
	}
	var doc *openAPI
	if !c.noOpenAPI {
		var err error
		if doc, err = newOpenAPI(c.basePath); err != nil {
			return nil, fmt.Errorf("petstore.New: %w", err)
		}
	}
	retry := (c.retryAfter + 999_999_999) / 1_000_000_000
	return &handler{
		openAPI:     doc,
		store:       c.store,
		auth:        c.auth,
		log:         c.logger,
		maxBody:     c.maxBody,
		petsPath:    c.basePath + "/pets",
		petPrefix:   c.basePath + "/pets/",
		challenge:   httpapi.NewChallenge("petstore"),
		pets:        httpapi.NewMethods(http.MethodGet, http.MethodPost),
		pet:         httpapi.NewMethods(http.MethodGet),
		acceptPost:  httpapi.Header("application/json"),
		retryAfter:  httpapi.Header(strconv.FormatInt(int64(retry), 10)),
		deprecation: httpapi.Header(httpapi.FormatDeprecation(c.deprecation)),
		sunset:      httpapi.Header(httpapi.FormatSunset(c.sunset)),
		successor:   httpapi.Header(`<../pets>; rel="successor-version"`),
	}, nil
}

// handler serves the API. Everything in it is set by New and read-only
// afterwards, except the pools.
type handler struct {
	store   Store
	auth    Authenticator
	log     *slog.Logger
	maxBody int64
	buffers httpapi.BufferPool
	lists   listPool // for listPets

	petsPath  string // base + "/pets"
	petPrefix string // base + "/pets/"

	openAPI *openAPI // nil when the document is not served

	challenge httpapi.Challenge
	pets, pet httpapi.Methods

	// Header values, shared by all responses.
	acceptPost, retryAfter, deprecation, sunset, successor []string
}

// ServeHTTP routes the request. Every route of the API is here: the request
// is authenticated first, so that a caller without a valid key learns
// nothing about paths or methods, then dispatched by path and method. The
// OpenAPI document alone is served before authentication (see WithOpenAPI).
func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var token string // for scrubbing a panic's message
	defer func() {
		if v := recover(); v != nil {
			h.panicked(w, r, v, token)
		}
	}()

	path := r.URL.EscapedPath()
	if h.openAPI != nil && path == h.openAPI.path {
		h.openAPI.serve(w, r) // the one resource without authentication
		return
	}
	petID, isPet := strings.CutPrefix(path, h.petPrefix)
	isPet = isPet && petID != "" && !strings.Contains(petID, "/")
	isPets := path == h.petsPath

	op := OpNone
	switch {
	case isPets && (r.Method == http.MethodGet || r.Method == http.MethodHead):
		op = OpListPets
	case isPets && r.Method == http.MethodPost:
		op = OpCreatePet
	case isPet && (r.Method == http.MethodGet || r.Method == http.MethodHead):
		op = OpGetPet
	}

	var err error
	token, err = httpapi.BearerToken(r)
	if err != nil {
		h.challenge.Write(w, r, errors.Is(err, httpapi.ErrMalformedToken))
		return
	}
	ctx, ok := h.authenticate(w, r, op, token)
	if !ok {
		return
	}

	switch op {
	case OpListPets:
		h.listPets(ctx, w, r)
	case OpCreatePet:
		h.createPet(ctx, w, r)
	case OpGetPet:
		h.getPet(ctx, w, r, petID)
	default:
		switch {
		case isPets:
			h.pets.WriteNotAllowed(w, r)
		case isPet:
			h.pet.WriteNotAllowed(w, r)
		default:
			httpapi.WriteError(w, r, httpapi.CodeNotFound, "no such path; the API serves "+h.petsPath+" and "+h.petPrefix+"{petId}")
		}
	}
}

// authenticate asks the Authenticator about token and answers the request
// itself when the answer is no. It returns the context for the store.
func (h *handler) authenticate(w http.ResponseWriter, r *http.Request, op Operation, token string) (context.Context, bool) {
	ctx, err := h.auth.Authenticate(r.Context(), op, token)
	switch {
	case err == nil:
		if ctx == nil {
			ctx = r.Context()
		}
		return ctx, true
	case errors.Is(err, ErrUnauthorized):
		h.challenge.Write(w, r, true)
	case errors.Is(err, ErrForbidden):
		what := "this operation"
		if op != OpNone {
			what = string(op)
		}
		httpapi.WriteError(w, r, httpapi.CodeForbidden, "the API key is valid but may not perform "+what+"; use a key that may")
	default:
		h.log.LogAttrs(r.Context(), slog.LevelError, "petstore: authenticator failed",
			slog.String("operation", string(op)), slog.String("error", scrub(err.Error(), token)))
		h.unavailable(w, r, "authentication is unavailable; retry later")
	}
	return nil, false
}

// failed answers a request whose store call returned err: 503 for a
// temporary failure, 500 for anything else, with the detail in the log only.
func (h *handler) failed(w http.ResponseWriter, r *http.Request, op Operation, err error) {
	// A store may put the caller's identity into its errors: scrub the token.
	token, _ := httpapi.BearerToken(r)
	msg := scrub(err.Error(), token)
	if errors.Is(err, ErrUnavailable) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		h.log.LogAttrs(r.Context(), slog.LevelWarn, "petstore: store unavailable",
			slog.String("operation", string(op)), slog.String("error", msg))
		h.unavailable(w, r, "the store is unavailable; retry later")
		return
	}
	h.log.LogAttrs(r.Context(), slog.LevelError, "petstore: store failed",
		slog.String("operation", string(op)), slog.String("error", msg))
	httpapi.WriteError(w, r, httpapi.CodeInternal, "internal error")
}

func (h *handler) unavailable(w http.ResponseWriter, r *http.Request, message string) {
	w.Header()["Retry-After"] = h.retryAfter
	httpapi.WriteError(w, r, httpapi.CodeUnavailable, message)
}

// panicked logs a panic with its stack and answers 500. A panic with
// http.ErrAbortHandler is passed on, as net/http expects.
func (h *handler) panicked(w http.ResponseWriter, r *http.Request, v any, token string) {
	if v == http.ErrAbortHandler {
		panic(v)
	}
	h.log.LogAttrs(r.Context(), slog.LevelError, "petstore: panic serving request",
		slog.String("method", r.Method), slog.String("path", r.URL.Path),
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
