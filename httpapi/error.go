package httpapi

import (
	"net/http"

	"github.com/petstore-go/petstore/internal/jsontext"
	"github.com/petstore-go/petstore/internal/respond"
)

// Code is the stable, machine-readable code of an error response. Clients
// branch on the code, not on the message, which may change.
type Code string

// The error codes, each with the HTTP status that Status returns for it.
const (
	CodeInvalidParameter     Code = "invalid_parameter"      // 400: a query or path parameter is malformed or out of range
	CodeInvalidBody          Code = "invalid_body"           // 400: the request body is not an acceptable JSON object
	CodeUnauthorized         Code = "unauthorized"           // 401: no credential, or one that is not valid
	CodeForbidden            Code = "forbidden"              // 403: the credential may not perform the operation
	CodeNotFound             Code = "not_found"              // 404: no such resource
	CodeMethodNotAllowed     Code = "method_not_allowed"     // 405: the resource does not answer the method
	CodeIdempotencyKeyInUse  Code = "idempotency_key_in_use" // 409: a request with the same Idempotency-Key is still running
	CodeIdempotencyKeyReused Code = "idempotency_key_reused" // 422: the Idempotency-Key was used for another request
	CodePayloadTooLarge      Code = "payload_too_large"      // 413: the request body is over the limit
	CodeUnsupportedMediaType Code = "unsupported_media_type" // 415: the request body is not application/json
	CodeRateLimited          Code = "rate_limited"           // 429: too many requests, or streams, at once; retry later
	CodeInternal             Code = "internal"               // 500: a failure the client cannot fix
	CodeUnavailable          Code = "unavailable"            // 503: a temporary failure; retry later
)

// Status returns the HTTP status that goes with c: the one table from error
// code to status. An unknown code gives 500.
func (c Code) Status() int {
	switch c {
	case CodeInvalidParameter, CodeInvalidBody:
		return http.StatusBadRequest
	case CodeUnauthorized:
		return http.StatusUnauthorized
	case CodeForbidden:
		return http.StatusForbidden
	case CodeNotFound:
		return http.StatusNotFound
	case CodeMethodNotAllowed:
		return http.StatusMethodNotAllowed
	case CodeIdempotencyKeyInUse:
		return http.StatusConflict
	case CodeIdempotencyKeyReused:
		return http.StatusUnprocessableEntity
	case CodePayloadTooLarge:
		return http.StatusRequestEntityTooLarge
	case CodeUnsupportedMediaType:
		return http.StatusUnsupportedMediaType
	case CodeRateLimited:
		return http.StatusTooManyRequests
	case CodeUnavailable:
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// Error is the body of every error response:
//
//	{"code":"not_found","message":"no pet has ID 7","status":404}
//
// Status always equals the response's HTTP status.
type Error struct {
	Code    Code   `json:"code"`
	Message string `json:"message"`
	Status  int    `json:"status"`
}

// Error returns the code and the message.
func (e *Error) Error() string { return string(e.Code) + ": " + e.Message }

// WriteError answers r with the error body for code and message and the
// status that goes with code, with the headers of every response of the API:
// Content-Type: application/json, Cache-Control: no-store and
// X-Content-Type-Options: nosniff. A HEAD request gets no body. The message
// must say what was wrong and how to fix it, and must not contain
// credentials or internal detail.
func WriteError(w http.ResponseWriter, r *http.Request, code Code, message string) {
	var buf [256]byte
	respond.JSON(w, r, code.Status(), appendError(buf[:0], code, message))
}

// appendError appends the JSON error body for code and message to dst.
func appendError(dst []byte, code Code, message string) []byte {
	dst = append(dst, `{"code":`...)
	dst = jsontext.AppendString(dst, string(code))
	dst = append(dst, `,"message":`...)
	dst = jsontext.AppendString(dst, message)
	dst = append(dst, `,"status":`...)
	dst = jsontext.AppendInt(dst, int64(code.Status()))
	return append(dst, '}')
}
