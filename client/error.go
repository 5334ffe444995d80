package client

import (
	"encoding/json"
	"net/http"
	"strconv"

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
	// Message is the message of the answer's body, which says what was
	// wrong and how to fix it, or a description of the answer when it did
	// not have the API's error body.
	Message string
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
	switch e.Status {
	case http.StatusNotFound:
		return petstore.ErrNotFound
	case http.StatusUnauthorized:
		return petstore.ErrUnauthorized
	case http.StatusForbidden:
		return petstore.ErrForbidden
	case http.StatusServiceUnavailable:
		return petstore.ErrUnavailable
	case http.StatusConflict:
		return petstore.ErrIdempotencyKeyInUse
	case http.StatusUnprocessableEntity:
		return petstore.ErrIdempotencyKeyReused
	case http.StatusBadRequest:
		if e.Code == httpapi.CodeInvalidBody {
			return petstore.ErrInvalidPet
		}
	}
	return nil
}

// errorAnswer makes the Error for an answer with status and body.
func errorAnswer(status int, body []byte) *Error {
	var b httpapi.Error
	if err := json.Unmarshal(body, &b); err != nil || b.Code == "" {
		return &Error{Status: status, Message: "the server answered " + strconv.Itoa(status) + " " +
			http.StatusText(status) + " without the API's error body; check the base URL and any proxy in between"}
	}
	return &Error{Status: status, Code: b.Code, Message: b.Message}
}
