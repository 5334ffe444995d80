package client

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/httpapi"
)

// Error is an error answer of the server: its HTTP status and the code and
// message of its body (see httpapi.Error). Every error that a Client returns
// for an error answer holds one; get it with errors.As:
//
//	var e *client.Error
//	if errors.As(err, &e) && e.Code == httpapi.CodeInvalidParameter {
//		...
//	}
//
// It also wraps the library's sentinel error for the answer, if there is
// one, so that errors.Is tells the same cases apart as with any Store:
//
//	404                       petstore.ErrNotFound
//	401                       petstore.ErrUnauthorized
//	403                       petstore.ErrForbidden
//	503                       petstore.ErrUnavailable
//	400 invalid_body          petstore.ErrInvalidPet
//	409                       petstore.ErrIdempotencyKeyInUse
//	422                       petstore.ErrIdempotencyKeyReused
//
// Other answers, such as 400 invalid_parameter or 500 internal, wrap no
// sentinel.
type Error struct {
	// Status is the HTTP status of the answer.
	Status int
	// Code is the code of the answer's body, or "" when the answer did not
	// have the API's error body (one from a proxy, say).
	Code httpapi.Code
	// Message is the message of the answer's body, or a description of
	// the answer when it did not have the API's error body.
	Message string
	// Fields are the problems with members of the request's body or with
	// its query parameters that the answer listed (see httpapi.Error).
	Fields []httpapi.FieldError
	// RetryAfter is the wait that the answer's Retry-After header asked
	// for, or 0 when it had none.
	RetryAfter time.Duration
	// Budget is what the answer said of the caller's budget, or nil when
	// it said nothing.
	Budget *Budget
}

// Error returns the status, the code and the message.
func (e *Error) Error() string {
	s := strconv.Itoa(e.Status)
	if e.Code != "" {
		s += " " + string(e.Code)
	}
	return s + ": " + e.Message
}

// Unwrap returns the sentinel error for the answer (see Error), or nil.
func (e *Error) Unwrap() error {
	if e.Status == http.StatusBadRequest && e.Code == httpapi.CodeInvalidBody {
		return petstore.ErrInvalidPet
	}
	return sentinels[e.Status]
}

// sentinels are the sentinel errors of the statuses that have one.
var sentinels = map[int]error{
	http.StatusNotFound:            petstore.ErrNotFound,
	http.StatusUnauthorized:        petstore.ErrUnauthorized,
	http.StatusForbidden:           petstore.ErrForbidden,
	http.StatusServiceUnavailable:  petstore.ErrUnavailable,
	http.StatusConflict:            petstore.ErrIdempotencyKeyInUse,
	http.StatusUnprocessableEntity: petstore.ErrIdempotencyKeyReused,
}

// errorAnswer makes the Error for an answer with status and body.
func errorAnswer(status int, body []byte) *Error {
	var b httpapi.Error
	if err := json.Unmarshal(body, &b); err != nil || b.Code == "" {
		return &Error{Status: status, Message: "the server answered " + strconv.Itoa(status) + " " +
			http.StatusText(status) + " without the API's error body; check the base URL and any proxy in between"}
	}
	return &Error{Status: status, Code: b.Code, Message: b.Message, Fields: b.Errors}
}

// ErrRedirectRefused is wrapped by the error of a request that the server
// redirected to another origin than the base URL's (another scheme, host
// or port), which the client does not follow, so that the API key goes
// nowhere else; and by that of a Link to a next page outside the base URL.
var ErrRedirectRefused = errors.New("client: redirect refused")

// ErrBadResponse is wrapped by the error of an answer that the client does
// not trust: a pet other than the one created or asked for, a page with a
// pet the listing did not ask for, or a body larger than the client reads.
// The error says what was wrong. Such an answer is not retried.
var ErrBadResponse = errors.New("client: bad response")

// ErrTooManyPets is wrapped by the error of a List without a Limit that
// would collect more than MaxListPets pets.
var ErrTooManyPets = errors.New("client: too many pets to list")

// maxShown is how many bytes of a value from the server an error shows.
const maxShown = 64

// cut returns s, or its first maxShown bytes (whole characters) and how
// long it is, so that an error never repeats a huge value.
func cut(s string) string {
	if len(s) <= maxShown {
		return s
	}
	i := maxShown
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "… (" + strconv.Itoa(len(s)) + " bytes)"
}
