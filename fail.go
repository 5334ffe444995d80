package petstore

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"net/http"

	"github.com/petstore-go/petstore/httpapi"
)

// A requestError is a mistake in the request, with its answer. The client
// is told what it is and how to fix it; nothing is logged.
type requestError answer

func (e *requestError) Error() string { return e.message }

// authenticatorError is a failure of the Authenticator itself, such as its
// backend being down: not a verdict on the token.
type authenticatorError struct{ err error }

func (e authenticatorError) Error() string { return "authenticator: " + e.err.Error() }
func (e authenticatorError) Unwrap() error { return e.err }

// An answer is how the handler answers a failure and what it logs of it.
type answer struct {
	code    httpapi.Code         // and so the status
	message string               // for the client
	fields  []httpapi.FieldError // the problems with parts of the request, if any
	header  string               // a header that the answer carries, or ""
	value   []string             // its value, shared and never modified
	level   slog.Level           // the level it is logged at, when log is set
	log     string               // the log message, or "" to log nothing
}

// answerFor is the one table from a failure to the answer: the code and so
// the status, the message, the headers, and the log level. The first row
// that err matches decides. op is the operation that failed; clientGone
// reports whether the request's context is done, the client having gone.
func (h *handler) answerFor(op Operation, err error, clientGone bool) answer {
	if req, ok := err.(*requestError); ok { // returned as it is, never wrapped
		return answer(*req)
	}
	_, authFailed := err.(authenticatorError) // returned as it is, never wrapped
	switch {
	case errors.Is(err, httpapi.ErrNoCredentials):
		message := h.credential.missing
		if err != httpapi.ErrNoCredentials { // the common case, without the cost of errors.As
			// A credential of another scheme than Bearer.
			var se *httpapi.SchemeError
			if errors.As(err, &se) {
				message = "the Authorization header uses " + cmp.Or(se.Scheme, "another scheme") + "; " + message
			}
		}
		return answer{code: httpapi.CodeUnauthorized, header: "Www-Authenticate", value: h.credential.challengeNone,
			message: message}
	case errors.Is(err, httpapi.ErrMalformedToken), errors.Is(err, ErrUnauthorized):
		return answer{code: httpapi.CodeUnauthorized, header: "Www-Authenticate", value: h.credential.challengeReject,
			message: h.credential.rejected}
	case errors.Is(err, ErrForbidden):
		what := cmp.Or(string(op), "this operation") // OpNone is ""
		return answer{code: httpapi.CodeForbidden, message: h.credential.forbidden + what + "; use one that may"}
	case errors.Is(err, ErrIdempotencyKeyReused):
		return answer{code: httpapi.CodeIdempotencyKeyReused,
			message: "this Idempotency-Key was used for another pet; send another Idempotency-Key for a new pet"}
	case errors.Is(err, ErrIdempotencyKeyInUse):
		return answer{code: httpapi.CodeIdempotencyKeyInUse, header: "Retry-After", value: h.retryAfter,
			message: "a create with this Idempotency-Key is still running; retry later"}
	case errors.Is(err, ErrInvalidPet):
		// Only the problems of Validate are told: a rule of the store's own
		// has a text that is not for the client.
		if problems := petProblems(err); len(problems) > 0 {
			return answer{code: httpapi.CodeInvalidBody, message: joinDetails(problems), fields: problems}
		}
		return answer{code: httpapi.CodeInvalidBody, message: "the store does not accept this pet"}
	case errors.Is(err, errLimiter):
		return answer{code: httpapi.CodeUnavailable, message: "the rate limiter is unavailable; retry later",
			header: "Retry-After", value: h.retryAfter, level: slog.LevelError, log: "petstore: rate limiter failed"}
	case errors.Is(err, context.Canceled) && clientGone:
		// The client hung up: nobody reads the answer, and nothing failed.
		return answer{code: httpapi.CodeClientClosedRequest, level: slog.LevelDebug, log: "petstore: client went away"}
	case errors.Is(err, context.Canceled):
		// Cancelled while the client still waits: by the Store, or by a
		// context that a host's middleware cancelled. Not the client's doing.
		return answer{code: httpapi.CodeUnavailable, message: "the request was cancelled; retry later",
			header: "Retry-After", value: h.retryAfter, level: slog.LevelWarn, log: "petstore: request cancelled"}
	case authFailed:
		return answer{code: httpapi.CodeUnavailable, message: "authentication is unavailable; retry later",
			header: "Retry-After", value: h.retryAfter, level: slog.LevelError, log: "petstore: authenticator failed"}
	case errors.Is(err, context.DeadlineExceeded):
		return answer{code: httpapi.CodeUnavailable, message: "the store did not answer in time; retry later",
			header: "Retry-After", value: h.retryAfter, level: slog.LevelWarn, log: "petstore: store timed out"}
	case errors.Is(err, ErrUnavailable):
		return answer{code: httpapi.CodeUnavailable, message: "the store is unavailable; retry later",
			header: "Retry-After", value: h.retryAfter, level: slog.LevelWarn, log: "petstore: store unavailable"}
	}
	return answer{code: httpapi.CodeInternal, message: "internal error", level: slog.LevelError, log: "petstore: store failed"}
}

// fail answers a request that failed with err, and logs what answerFor says
// to log, with the request's token scrubbed from the error's text. It
// returns the code of the answer.
func (h *handler) fail(w http.ResponseWriter, r *http.Request, op Operation, err error) httpapi.Code {
	a := h.answerFor(op, err, r.Context().Err() != nil)
	if a.log != "" && h.log.Enabled(r.Context(), a.level) {
		token, _ := h.token(r)
		h.log.LogAttrs(r.Context(), a.level, a.log,
			slog.String("operation", string(op)), slog.String("error", scrub(err.Error(), token)))
	}
	if a.code == httpapi.CodeClientClosedRequest {
		// Nobody reads it: the status is for the Observer and a host's
		// middleware, and there is no body.
		w.WriteHeader(httpapi.StatusClientClosedRequest)
		return a.code
	}
	if a.header != "" {
		w.Header()[a.header] = a.value
	}
	if a.code == httpapi.CodeUnauthorized {
		// A client without a valid key keeps no connection: net/http closes
		// an HTTP/1.1 one after the answer, and sends an HTTP/2 one GOAWAY.
		w.Header()["Connection"] = connectionClose
	}
	httpapi.WriteError(w, r, a.code, a.message, a.fields...)
	return a.code
}
