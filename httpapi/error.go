package httpapi

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/petstore-go/petstore/internal/respond"
	"github.com/petstore-go/petstore/internal/wirejson"
)

// Code is the stable, machine-readable code of an error response. Clients
// branch on the code, not on the message, which may change.
type Code string

// The error codes. Each has the HTTP status that Status returns for it, the
// title that Title returns and the type URI that Type returns.
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
	CodeRateLimited          Code = "rate_limited"           // 429: the caller is over its budget, its share or its streams; retry after Retry-After
	CodeInternal             Code = "internal"               // 500: a failure the client cannot fix
	CodeUnavailable          Code = "unavailable"            // 503: a temporary failure; retry later
)

// codes is the one table of the codes: each one's status, title and type.
// An unknown code is CodeInternal's.
var codes = map[Code]codeEntry{
	CodeInvalidParameter:     {http.StatusBadRequest, "Invalid parameter", TypeBase + string(CodeInvalidParameter)},
	CodeInvalidBody:          {http.StatusBadRequest, "Invalid body", TypeBase + string(CodeInvalidBody)},
	CodeUnauthorized:         {http.StatusUnauthorized, "Unauthorized", TypeBase + string(CodeUnauthorized)},
	CodeForbidden:            {http.StatusForbidden, "Forbidden", TypeBase + string(CodeForbidden)},
	CodeNotFound:             {http.StatusNotFound, "Not found", TypeBase + string(CodeNotFound)},
	CodeMethodNotAllowed:     {http.StatusMethodNotAllowed, "Method not allowed", TypeBase + string(CodeMethodNotAllowed)},
	CodeIdempotencyKeyInUse:  {http.StatusConflict, "Idempotency key in use", TypeBase + string(CodeIdempotencyKeyInUse)},
	CodeIdempotencyKeyReused: {http.StatusUnprocessableEntity, "Idempotency key reused", TypeBase + string(CodeIdempotencyKeyReused)},
	CodePayloadTooLarge:      {http.StatusRequestEntityTooLarge, "Payload too large", TypeBase + string(CodePayloadTooLarge)},
	CodeUnsupportedMediaType: {http.StatusUnsupportedMediaType, "Unsupported media type", TypeBase + string(CodeUnsupportedMediaType)},
	CodeRateLimited:          {http.StatusTooManyRequests, "Too many requests", TypeBase + string(CodeRateLimited)},
	CodeInternal:             {http.StatusInternalServerError, "Internal error", TypeBase + string(CodeInternal)},
	CodeUnavailable:          {http.StatusServiceUnavailable, "Unavailable", TypeBase + string(CodeUnavailable)},
}

// TypeBase is the start of every error type URI: the type of a code is
// TypeBase followed by the code, the anchor of the code's section on the
// page that explains every code.
const TypeBase = "https://github.com/petstore-go/petstore/blob/main/docs/errors.md#"

// Status returns the HTTP status that goes with c. An unknown code gives
// 500.
func (c Code) Status() int { return c.entry().status }

// Title returns the short summary of c, the same for every error with that
// code (RFC 9457's "title"). An unknown code gives CodeInternal's.
func (c Code) Title() string { return c.entry().title }

// Type returns the URI that identifies c (RFC 9457's "type"): TypeBase
// followed by c. An unknown code gives CodeInternal's.
func (c Code) Type() string { return c.entry().typ }

// A codeEntry is what codes holds of a code.
type codeEntry struct {
	status     int
	title, typ string
}

// entry returns the entry of c in codes, or CodeInternal's.
func (c Code) entry() codeEntry {
	if e, ok := codes[c]; ok {
		return e
	}
	return codes[CodeInternal]
}

// Error is the body of every error response, in the shape of RFC 9457's
// problem details with three members of its own first:
//
//	{"code":"invalid_body","message":"name must not be blank; categoryId must be 1 or greater",
//	 "status":400,"type":"https://…/errors.md#invalid_body","title":"Invalid body",
//	 "errors":[{"pointer":"/name","detail":"name must not be blank"},
//	           {"pointer":"/categoryId","detail":"categoryId must be 1 or greater"}]}
//
// Status always equals the response's HTTP status; Type and Title follow
// from Code. Errors is present when the request had problems with
// particular fields or parameters, one entry for each, in a stable order.
type Error struct {
	Code    Code         `json:"code"`
	Message string       `json:"message"`
	Status  int          `json:"status"`
	Type    string       `json:"type"`
	Title   string       `json:"title"`
	Errors  []FieldError `json:"errors,omitempty"`
}

// Error returns the code and the message.
func (e *Error) Error() string { return string(e.Code) + ": " + e.Message }

// A FieldError is one problem with one part of a request: a member of the
// JSON body, named by Pointer, or a query parameter, named by Parameter.
// Exactly one of the two is set.
type FieldError struct {
	// Pointer is a JSON Pointer (RFC 6901) to the member of the request
	// body, such as "/name".
	Pointer string `json:"pointer,omitempty"`
	// Parameter is the name of the query parameter, such as "limit".
	Parameter string `json:"parameter,omitempty"`
	// Detail says what is wrong with it and how to fix it.
	Detail string `json:"detail"`
}

// The media types of error bodies.
const (
	MediaTypeJSON    = "application/json"
	MediaTypeProblem = "application/problem+json"
)

// WriteError answers r with the error body for code, message and the field
// errors, if any, and the status that goes with code, with the headers of
// every response of the API: Content-Type, Cache-Control: no-store and
// X-Content-Type-Options: nosniff. The Content-Type is
// application/problem+json when r's Accept header prefers it to
// application/json (see PrefersProblem), and application/json otherwise. A
// HEAD request gets no body. The message must say what was wrong and how to
// fix it, and must not contain credentials or internal detail.
func WriteError(w http.ResponseWriter, r *http.Request, code Code, message string, fields ...FieldError) {
	var buf [512]byte
	body := appendError(buf[:0], code, message, fields...)
	mediaType := MediaTypeJSON
	if PrefersProblem(r) {
		mediaType = MediaTypeProblem
	}
	respond.Document(w, r, code.Status(), mediaType, body)
}

// appendError appends to dst the JSON text of the Error for code, message
// and fields, ending with a newline: the body that WriteError writes.
func appendError(dst []byte, code Code, message string, fields ...FieldError) []byte {
	dst = appendMember(dst, `{"code":`, string(code))
	dst = appendMember(dst, `,"message":`, message)
	dst = strconv.AppendInt(append(dst, `,"status":`...), int64(code.Status()), 10)
	dst = appendMember(dst, `,"type":`, code.Type())
	dst = appendMember(dst, `,"title":`, code.Title())
	if len(fields) > 0 {
		dst = append(dst, `,"errors":[`...)
		for i, f := range fields {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, '{')
			if f.Pointer != "" {
				dst = append(appendMember(dst, `"pointer":`, f.Pointer), ',')
			}
			if f.Parameter != "" {
				dst = append(appendMember(dst, `"parameter":`, f.Parameter), ',')
			}
			dst = append(appendMember(dst, `"detail":`, f.Detail), '}')
		}
		dst = append(dst, ']')
	}
	return append(dst, "}\n"...)
}

// appendMember appends to dst the text prefix, such as `,"name":`, and the
// JSON string of s.
func appendMember(dst []byte, prefix, s string) []byte {
	return wirejson.AppendString(append(dst, prefix...), s)
}

// PrefersProblem reports whether r's Accept header prefers
// application/problem+json to application/json: whether the quality that the
// header gives the first is greater than the one it gives the second, each
// taken from the most specific media range that matches it (RFC 9110,
// section 12.5.1). A request without Accept, or with a tie such as */*,
// prefers application/json, so a client that did not ask for problem
// details never gets them.
func PrefersProblem(r *http.Request) bool {
	problem, json := quality{}, quality{}
	for _, v := range r.Header["Accept"] {
		for part := range strings.SplitSeq(v, ",") {
			mediaRange, params, _ := strings.Cut(part, ";")
			mediaRange = strings.ToLower(strings.TrimSpace(mediaRange))
			q := acceptQ(params)
			problem.match(mediaRange, MediaTypeProblem, q)
			json.match(mediaRange, MediaTypeJSON, q)
		}
	}
	return problem.q > json.q
}

// A quality is the quality of one media type in an Accept header, from the
// most specific media range seen so far that matches it.
type quality struct {
	specificity int // 0: none seen, 1: */*, 2: type/*, 3: the type itself
	q           float64
}

// match takes the media range mr with quality q into account for the media
// type mt.
func (a *quality) match(mr, mt string, q float64) {
	s := 0
	switch {
	case mr == mt:
		s = 3
	case strings.HasSuffix(mr, "/*") && strings.HasPrefix(mt, mr[:len(mr)-1]):
		s = 2
	case mr == "*/*":
		s = 1
	}
	if s > a.specificity || s == a.specificity && s > 0 && q > a.q {
		a.specificity, a.q = s, q
	}
}

// acceptQ returns the q parameter among params (";q=0.5;level=1"), or 1
// when there is none, or 0 when it is malformed.
func acceptQ(params string) float64 {
	for p := range strings.SplitSeq(params, ";") {
		name, value, _ := strings.Cut(strings.TrimSpace(p), "=")
		if strings.EqualFold(name, "q") {
			q, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
			if err != nil || q < 0 || q > 1 {
				return 0
			}
			return q
		}
	}
	return 1
}
