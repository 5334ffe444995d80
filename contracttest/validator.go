// Package contracttest proves that the petstore handler does what its OpenAPI
// document says. A Validator checks every request and response that passes
// through its Transport against the document, in a strict mode that
// kin-openapi's defaults do not give:
//
//   - a response status that the operation does not document fails;
//   - a response header that the response does not document fails, except
//     the ones that HTTP itself manages (Date, Content-Length, Connection and
//     the other hop-by-hop headers) and Content-Type, which the response's
//     content documents;
//   - a member of a response object that its schema does not list fails, as
//     if every object schema had "additionalProperties": false;
//   - an error body whose status is not the response's status, or whose code
//     does not go with it, fails;
//   - a request that the document says is invalid must not succeed.
//
// HEAD is checked as GET without a body. Requests for paths or methods that
// the document does not list are checked against the answers that it
// describes for them in words (404 and 405 errors, the latter with Allow as
// the route table gives it, and the authentication failures), and the document itself against what the handler promises for
// it. The Validator records which operation answered with which status, so
// that a test can list the documented ones that it never exercised.
//
// Typical usage inside a test is:
//
//	v, err := contracttest.New(document)
//	...
//	client := &http.Client{Transport: v.Transport(http.DefaultTransport)}
//	// run requests with client; each violation is an error from client.Do
//	for _, err := range v.Errors() { t.Error(err) }
//	for _, o := range v.Missing() { t.Errorf("never exercised: %v", o) }
package contracttest

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/petstore-go/petstore/httpapi"
	"github.com/petstore-go/petstore/internal/wire"
)

// The pseudo-operations under which a Validator records requests that match
// no operation of the document.
const (
	OtherMethod = "(other method)" // a listed path with a method it does not list
	OtherPath   = "(unknown path)" // a path that is not listed
	Document    = "(openapi.json)" // the document itself
)

// An Outcome is an operation, named by its operationId or one of the
// pseudo-operations, and a response status.
type Outcome struct {
	Operation string
	Status    int
}

func (o Outcome) String() string { return o.Operation + " " + strconv.Itoa(o.Status) }

// A Validator checks HTTP exchanges against an OpenAPI document. Its methods
// may be called concurrently.
type Validator struct {
	doc        *openapi3.T
	router     routers.Router
	docPath    string // the server's base path + wire.OpenAPIPath
	synthetic  map[string]*openapi3.Operation
	documented []Outcome

	mu   sync.Mutex
	seen map[Outcome]int
	errs []error
}

// New loads document, checks that it is a valid OpenAPI 3 document, and
// returns a Validator for it. The document must have exactly one server, a
// path such as "/v1", as the handler serves it.
func New(document []byte) (*Validator, error) {
	doc, err := openapi3.NewLoader().LoadFromData(document)
	if err != nil {
		return nil, fmt.Errorf("contracttest: loading the document: %w", err)
	}
	if err := Validate(doc); err != nil {
		return nil, err
	}
	if len(doc.Servers) != 1 {
		return nil, fmt.Errorf("contracttest: the document has %d servers, want 1", len(doc.Servers))
	}
	forbidUnlistedMembers(doc)
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("contracttest: routing the document: %w", err)
	}
	synthetic, err := syntheticOperations(doc)
	if err != nil {
		return nil, err
	}
	v := &Validator{
		doc:       doc,
		router:    router,
		docPath:   strings.TrimSuffix(doc.Servers[0].URL, "/") + wire.OpenAPIPath,
		synthetic: synthetic,
		seen:      map[Outcome]int{},
	}
	for _, path := range doc.Paths.InMatchingOrder() {
		for _, op := range doc.Paths.Value(path).Operations() {
			for status := range op.Responses.Map() {
				n, err := strconv.Atoi(status)
				if err != nil {
					return nil, fmt.Errorf("contracttest: %s documents status %q; list statuses one by one", op.OperationID, status)
				}
				v.documented = append(v.documented, Outcome{op.OperationID, n})
			}
		}
	}
	v.documented = append(v.documented,
		Outcome{OtherMethod, http.StatusMethodNotAllowed},
		Outcome{OtherPath, http.StatusNotFound})
	slices.SortFunc(v.documented, func(a, b Outcome) int {
		return cmp.Or(strings.Compare(a.Operation, b.Operation), a.Status-b.Status)
	})
	return v, nil
}

// Validate checks that doc is a valid OpenAPI document, with its examples,
// defaults and patterns.
func Validate(doc *openapi3.T) error {
	if err := doc.Validate(context.Background(), openapi3.EnableSchemaFormatValidation(), openapi3.EnableSchemaPatternValidation(),
		openapi3.EnableSchemaDefaultsValidation(), openapi3.EnableExamplesValidation()); err != nil {
		return fmt.Errorf("contracttest: the document is not valid: %w", err)
	}
	return nil
}

// forbidUnlistedMembers makes every object schema of the components that
// allows any member reject the members it does not list, so that a response
// that grows a member fails.
func forbidUnlistedMembers(doc *openapi3.T) {
	no := false
	for _, s := range doc.Components.Schemas {
		if s.Value.Type.Is(openapi3.TypeObject) && s.Value.AdditionalProperties.Has == nil && s.Value.AdditionalProperties.Schema == nil {
			s.Value.AdditionalProperties.Has = &no
		}
	}
}

// syntheticOperations returns operations for what the document describes in
// words only: the answers to an unlisted method or path, and the document.
// Those two answers are errors like Internal, whose content and headers
// they share; a 405 also has Allow, with the values of the route table.
func syntheticOperations(doc *openapi3.T) (map[string]*openapi3.Operation, error) {
	named := map[int]string{401: "Unauthorized", 403: "Forbidden", 500: "Internal", 503: "Unavailable"}
	responses := map[int]*openapi3.ResponseRef{}
	for status, name := range named {
		r := doc.Components.Responses[name]
		if r == nil {
			return nil, fmt.Errorf("contracttest: the document has no response %s", name)
		}
		responses[status] = r
	}
	internal := responses[500].Value
	headers := internal.Headers
	responses[404] = &openapi3.ResponseRef{Value: &openapi3.Response{Headers: headers, Content: internal.Content}}
	var allow []any
	for _, r := range append(wire.Routes(), wire.Route{Pattern: wire.OpenAPIPath}) {
		if a := wire.Allow(r.Pattern); !slices.Contains(allow, any(a)) {
			allow = append(allow, a)
		}
	}
	allowHeader := &openapi3.Header{Parameter: openapi3.Parameter{Required: true, Schema: openapi3.NewStringSchema().WithEnum(allow...).NewRef()}}
	withAllow := openapi3.Headers{"Allow": {Value: allowHeader}}
	maps.Copy(withAllow, headers)
	responses[405] = &openapi3.ResponseRef{Value: &openapi3.Response{Headers: withAllow, Content: internal.Content}}

	document := openapi3.NewObjectSchema().WithRequired([]string{"openapi", "info", "paths"})
	responses[200] = &openapi3.ResponseRef{Value: &openapi3.Response{Headers: headers, Content: openapi3.NewContentWithJSONSchema(document)}}

	op := func(statuses ...int) *openapi3.Operation {
		rs := openapi3.NewResponses()
		for _, s := range statuses {
			rs.Set(strconv.Itoa(s), responses[s])
		}
		return &openapi3.Operation{Responses: rs}
	}
	return map[string]*openapi3.Operation{
		OtherMethod: op(401, 403, 405, 500, 503),
		OtherPath:   op(401, 403, 404, 500, 503),
		Document:    op(200, 405),
	}, nil
}

// Transport returns a RoundTripper that sends requests with next and checks
// each exchange. A violation is returned as the error of RoundTrip, which
// http.Client reports, and also kept for Errors.
func (v *Validator) Transport(next http.RoundTripper) http.RoundTripper {
	return transport{v: v, next: next}
}

type transport struct {
	v    *Validator
	next http.RoundTripper
}

func (t transport) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	send := req.Clone(req.Context())
	if req.Body != nil && req.Body != http.NoBody {
		var err error
		body, err = io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		send.Body = io.NopCloser(bytes.NewReader(body))
	}
	resp, err := t.next.RoundTrip(send)
	if err != nil {
		return nil, err
	}
	respBody, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(respBody))
	if err := t.v.Check(req, body, resp.StatusCode, resp.Header, respBody); err != nil {
		return nil, err
	}
	return resp, nil
}

// Check checks one exchange: the request req with its body reqBody,
// answered with status, header and respBody. It records the outcome and
// returns the violations, which Errors also returns from then on.
func (v *Validator) Check(req *http.Request, reqBody []byte, status int, header http.Header, respBody []byte) error {
	name, errs := v.check(req, reqBody, status, header, respBody)
	v.mu.Lock()
	defer v.mu.Unlock()
	v.seen[Outcome{name, status}]++
	if len(errs) == 0 {
		return nil
	}
	err := fmt.Errorf("contracttest: %s %s (%s) answered %d: %w", req.Method, req.URL.RequestURI(), name, status, errors.Join(errs...))
	v.errs = append(v.errs, err)
	return err
}

// check returns the name of the operation that req matches and the
// violations of the exchange.
func (v *Validator) check(req *http.Request, reqBody []byte, status int, header http.Header, respBody []byte) (string, []error) {
	var errs []error
	// HEAD is GET without a body: check it as GET.
	asGet := req.Clone(req.Context())
	if req.Method == http.MethodHead {
		asGet.Method = http.MethodGet
		if len(respBody) > 0 {
			errs = append(errs, fmt.Errorf("HEAD answered with %d body bytes", len(respBody)))
		}
	}
	asGet.Body = io.NopCloser(bytes.NewReader(reqBody))

	var name string
	var reqErr error
	route, pathParams, err := v.router.FindRoute(asGet)
	switch {
	case req.URL.EscapedPath() == v.docPath:
		name = Document
		if req.Method != http.MethodGet && req.Method != http.MethodHead {
			reqErr = errors.New("the document answers GET and HEAD only")
		}
	case errors.Is(err, routers.ErrMethodNotAllowed):
		name, reqErr = OtherMethod, err
	case err != nil:
		name, reqErr = OtherPath, err
	default:
		name = route.Operation.OperationID
		reqErr = openapi3filter.ValidateRequest(req.Context(), &openapi3filter.RequestValidationInput{
			Request:    asGet,
			PathParams: pathParams,
			Route:      route,
			Options: &openapi3filter.Options{
				AuthenticationFunc:  bearerSyntax,
				SkipSettingDefaults: true,
				MultiError:          true,
			},
		})
	}
	if op := v.synthetic[name]; op != nil {
		route = &routers.Route{Spec: v.doc, Method: asGet.Method, Operation: op}
	}
	if reqErr != nil && status < 300 {
		errs = append(errs, fmt.Errorf("the document says the request is not valid, yet it succeeded: %w", reqErr))
	}

	ref := route.Operation.Responses.Status(status)
	if ref == nil {
		return name, append(errs, fmt.Errorf("status %d is not documented", status))
	}
	response := ref.Value
	errs = append(errs, undocumentedHeaders(response, header)...)
	// JSON when there is a body: a response that documents one (any but a
	// 204 or a 304) has a Content-Type that it documents, and one that
	// documents none has neither a Content-Type nor a body.
	switch ct := header.Get("Content-Type"); {
	case len(response.Content) == 0 && (ct != "" || len(respBody) > 0):
		errs = append(errs, fmt.Errorf("the response documents no body, yet it has Content-Type %q and %d body bytes", ct, len(respBody)))
	case len(response.Content) > 0 && response.Content.Get(ct) == nil:
		errs = append(errs, fmt.Errorf("Content-Type %q is not documented", ct))
	}
	err = openapi3filter.ValidateResponse(req.Context(), &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: asGet, Route: route},
		Status:                 status,
		Header:                 header,
		Body:                   io.NopCloser(bytes.NewReader(respBody)),
		Options: &openapi3filter.Options{
			IncludeResponseStatus: true,
			ExcludeResponseBody:   req.Method == http.MethodHead,
			MultiError:            true,
		},
	})
	if err != nil {
		errs = append(errs, err)
	}
	if mt := response.Content.Get("application/json"); req.Method != http.MethodHead && mt != nil && mt.Schema != nil &&
		mt.Schema.Ref == "#/components/schemas/Error" {
		errs = append(errs, checkErrorBody(status, respBody)...)
	}
	return name, errs
}

// bearerSyntax accepts a request for the bearer scheme when it carries a
// syntactically valid bearer token, which is all that the document can say.
func bearerSyntax(_ context.Context, in *openapi3filter.AuthenticationInput) error {
	_, err := httpapi.BearerToken(in.RequestValidationInput.Request)
	return err
}

// managedHeaders are the response headers that HTTP itself manages and that
// a document does not describe.
var managedHeaders = []string{
	"Connection", "Content-Length", "Date", "Keep-Alive", "Proxy-Connection",
	"Te", "Trailer", "Transfer-Encoding", "Upgrade",
}

// undocumentedHeaders returns an error for every header in header that
// response does not document.
func undocumentedHeaders(response *openapi3.Response, header http.Header) []error {
	var errs []error
	for name := range header {
		name = http.CanonicalHeaderKey(name)
		if slices.Contains(managedHeaders, name) || name == "Content-Type" && len(response.Content) > 0 {
			continue
		}
		if !slices.ContainsFunc(slices.Collect(maps.Keys(response.Headers)), func(h string) bool { return http.CanonicalHeaderKey(h) == name }) {
			errs = append(errs, fmt.Errorf("header %s is not documented", name))
		}
	}
	slices.SortFunc(errs, func(a, b error) int { return strings.Compare(a.Error(), b.Error()) })
	return errs
}

// checkErrorBody checks what the Error schema cannot say: that the body's
// status is the response's and that its code goes with that status.
func checkErrorBody(status int, body []byte) []error {
	var e struct {
		Code   httpapi.Code
		Status int
	}
	if err := json.Unmarshal(body, &e); err != nil {
		return nil // the schema validation reports it
	}
	var errs []error
	if e.Status != status {
		errs = append(errs, fmt.Errorf("the error body's status is %d", e.Status))
	}
	if e.Code.Status() != status {
		errs = append(errs, fmt.Errorf("the error code %q goes with status %d", e.Code, e.Code.Status()))
	}
	return errs
}

// Errors returns every violation seen so far, in the order seen.
func (v *Validator) Errors() []error {
	v.mu.Lock()
	defer v.mu.Unlock()
	return slices.Clone(v.errs)
}

// Documented returns every outcome that the document describes: each status
// of each operation, and 405 and 404 for unlisted methods and paths.
func (v *Validator) Documented() []Outcome { return slices.Clone(v.documented) }

// Seen returns how many times each outcome was seen so far.
func (v *Validator) Seen() map[Outcome]int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return maps.Clone(v.seen)
}

// Missing returns the documented outcomes never seen so far.
func (v *Validator) Missing() []Outcome {
	v.mu.Lock()
	defer v.mu.Unlock()
	return slices.DeleteFunc(slices.Clone(v.documented), func(o Outcome) bool { return v.seen[o] > 0 })
}
