// Package wirecases is the one table of requests that the handler's tests
// send it, in process and over a real connection, each with the exact
// answer it must get: the status, the error code, the headers that matter
// and, for a success, the exact body or the pet it creates.
//
// Every case runs against a handler at the default base path /v1 that
// accepts Key, over a store that holds exactly Seed and nothing else.
package wirecases

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/httpapi"
	"github.com/petstore-go/petstore/internal/respond"
)

// Key is the API key that the handler under test accepts. The saved inputs
// of the Authorization fuzz target in the root package hold it too.
const Key = "fuzz-key-0123456789"

// seedPets is how many pets Seed returns: more than a default page, so that
// a list without a limit has a next page.
const seedPets = 30

// Seed returns the pets that the store holds, in this order, before each
// case: "pet 1" to "pet 30" in categories 1 to 5, their statuses cycling
// through petstore.Statuses (available, pending, sold) and none. Pet n gets
// ID n.
func Seed() []petstore.NewPet {
	statuses := append(petstore.Statuses(), "")
	pets := make([]petstore.NewPet, seedPets)
	for i := range pets {
		pets[i] = petstore.NewPet{Name: "pet " + strconv.Itoa(i+1), CategoryID: int64(i%5 + 1), Status: statuses[i%len(statuses)]}
	}
	return pets
}

// Seeded returns the pets of Seed as the store holds them, with their IDs.
func Seeded() []petstore.Pet {
	seed := Seed()
	pets := make([]petstore.Pet, len(seed))
	for i, p := range seed {
		pets[i] = petstore.Pet{ID: int64(i + 1), NewPet: p}
	}
	return pets
}

// A Case is one request and the answer that the handler must give it.
type Case struct {
	Name   string
	Method string // GET when empty
	// Target is the request target as it is on the wire: a path from the
	// server's root, with the handler at /v1, and a query.
	Target string
	Body   string
	// Header replaces the default headers, Authorization: Bearer Key and,
	// when the case has a body, Content-Type: application/json, for the
	// keys it has; a nil value removes the header.
	Header http.Header

	Status int
	Code   httpapi.Code // the error body's code; "" for a success
	// WantHeader holds headers that the answer must carry with exactly
	// this one value, or must not carry when the value is "". Location,
	// Allow, Accept-Post, Retry-After and WWW-Authenticate must be absent
	// unless they are named here (Location is implied by Created).
	WantHeader map[string]string
	// WantBody is the exact body of a success, when it is set. The body of
	// a HEAD answer is always empty.
	WantBody string
	// Created is the pet that an accepted create stores; the answer is
	// then that pet with the next ID, and Location names it.
	Created *petstore.NewPet
}

// Cases returns every case, in a stable order with unique names.
func Cases() []Case {
	var cases []Case
	for _, group := range [][]Case{authCases(), queryCases(), petIDCases(), conditionalCases(), bodyCases(), idempotencyCases(), routeCases()} {
		cases = append(cases, group...)
	}
	return cases
}

// Request returns the request of c. With baseURL empty it is a request as
// a server hands it to a handler; otherwise it is a client request to the
// server at baseURL (scheme and host, such as an httptest.Server's URL).
func (c Case) Request(ctx context.Context, baseURL string) (*http.Request, error) {
	return NewRequest(ctx, baseURL, c.Method, c.Target, c.Body, c.Header)
}

// NewRequest returns a request as Case.Request does, for method (GET when
// empty), target, body and header.
func NewRequest(ctx context.Context, baseURL, method, target, body string, header http.Header) (*http.Request, error) {
	if method == "" {
		method = http.MethodGet
	}
	u, err := url.ParseRequestURI(target)
	if err != nil {
		return nil, fmt.Errorf("a server would reject the target %q before the handler: %w", target, err)
	}
	var rd io.Reader = http.NoBody
	if body != "" {
		rd = strings.NewReader(body)
	}
	r, err := http.NewRequestWithContext(ctx, method, "http://petstore.test/", rd)
	if err != nil {
		return nil, err
	}
	r.URL = u
	if baseURL == "" {
		r.RequestURI = target
	} else {
		base, err := url.Parse(baseURL)
		if err != nil {
			return nil, err
		}
		u.Scheme, u.Host, r.Host = base.Scheme, base.Host, base.Host
	}
	r.Header.Set("Authorization", "Bearer "+Key)
	if body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		if v == nil {
			r.Header.Del(k)
			continue
		}
		r.Header[http.CanonicalHeaderKey(k)] = v
	}
	return r, nil
}

// Sendable reports whether net/http's client can send the request of c:
// it refuses header values with line breaks or NULs.
func (c Case) Sendable() bool {
	for _, values := range c.Header {
		for _, v := range values {
			if strings.ContainsAny(v, "\r\n\x00") {
				return false
			}
		}
	}
	return true
}

// Stored returns what the store must hold after the case: Seeded, and the
// created pet after it.
func (c Case) Stored() []petstore.Pet {
	pets := Seeded()
	if c.Created != nil {
		pets = append(pets, petstore.Pet{ID: int64(len(pets) + 1), NewPet: *c.Created})
	}
	return pets
}

// Check returns what is wrong with the answer status, header and body to
// the request of c: everything CheckResponse checks, and what c wants.
func (c Case) Check(status int, header http.Header, body []byte) error {
	code, err := CheckResponse(c.Method == http.MethodHead, status, header, body)
	if err != nil {
		return err
	}
	var errs []error
	if status != c.Status || code != c.Code {
		got := string(body)
		if len(got) > 300 {
			got = got[:300] + "…"
		}
		errs = append(errs, fmt.Errorf("status %d %q, want %d %q; body %s", status, code, c.Status, c.Code, got))
	}
	want := map[string]string{}
	for k, v := range c.WantHeader {
		want[http.CanonicalHeaderKey(k)] = v
	}
	wantBody := c.WantBody
	if c.Created != nil {
		stored := c.Stored()
		pet := stored[len(stored)-1]
		want["Location"] = "pets/" + strconv.FormatInt(pet.ID, 10)
		b, err := json.Marshal(pet)
		if err != nil {
			return err
		}
		wantBody = string(b)
	}
	for k, v := range want {
		got := header.Values(k)
		if v == "" && len(got) > 0 {
			errs = append(errs, fmt.Errorf("header %s = %q, want none", k, got))
		}
		if v != "" && (len(got) != 1 || got[0] != v) {
			errs = append(errs, fmt.Errorf("header %s = %q, want %q", k, got, v))
		}
	}
	// Headers that only some answers carry.
	for _, k := range []string{"Location", "Allow", "Accept-Post", "Retry-After", "Www-Authenticate"} {
		if _, ok := want[k]; !ok && len(header.Values(k)) > 0 {
			errs = append(errs, fmt.Errorf("header %s = %q, want none", k, header.Values(k)))
		}
	}
	if c.Method == http.MethodHead {
		wantBody = ""
	}
	if (wantBody != "" || c.Method == http.MethodHead) && string(body) != wantBody {
		errs = append(errs, fmt.Errorf("body %s, want %s", body, wantBody))
	}
	return errors.Join(errs...)
}

// HasBody reports whether an answer of status has a body, and so is JSON:
// all but a 1xx, a 204 and a 304 (RFC 9110, section 6.4.1). It is the rule
// "JSON when there is a body" of every harness that uses this package.
func HasBody(status int) bool {
	return status >= 200 && status != http.StatusNoContent && status != http.StatusNotModified
}

// CheckResponse returns what is wrong with an answer of the handler, whatever
// the request: it must carry exactly one X-Content-Type-Options: nosniff,
// and exactly one Cache-Control: no-store unless it has an ETag; one with a
// body (see HasBody) carries one Content-Type: application/json, and one
// without has neither a Content-Type nor a body. An answer with an ETag
// (a pet, a full page) must be a 200 or a 304, with a strong tag,
// Vary: Authorization and one of the Cache-Control values of CacheControls;
// a 304 has an ETag. A success's body must be JSON; an error's body must be
// exactly {code, message, status}, with a documented code that goes with
// the HTTP status, that status, and a message. It returns the error body's
// code, or "" for a success. The body of an answer to HEAD must be empty,
// and is not checked further.
func CheckResponse(head bool, status int, header http.Header, body []byte) (httpapi.Code, error) {
	want := map[string]string{
		"Content-Type":           "application/json",
		"Cache-Control":          "no-store",
		"X-Content-Type-Options": "nosniff",
	}
	if tags := header.Values("ETag"); len(tags) > 0 {
		if status != http.StatusOK && status != http.StatusNotModified {
			return "", fmt.Errorf("status %d with ETag %q: only a 200 or a 304 has one", status, tags)
		}
		if len(tags) != 1 || !isStrongTag(tags[0]) {
			return "", fmt.Errorf("header ETag = %q, want one strong tag", tags)
		}
		if cc := header.Values("Cache-Control"); len(cc) != 1 || !slices.Contains(CacheControls(), cc[0]) {
			return "", fmt.Errorf("header Cache-Control = %q with an ETag, want one of %q", cc, CacheControls())
		}
		delete(want, "Cache-Control")
		want["Vary"] = "Authorization"
	}
	if status == http.StatusNotModified && len(header.Values("ETag")) == 0 {
		return "", errors.New("304 without an ETag")
	}
	if !HasBody(status) {
		if ct := header.Values("Content-Type"); len(ct) > 0 || len(body) > 0 {
			return "", fmt.Errorf("status %d with Content-Type %q and a body of %d bytes, want neither", status, ct, len(body))
		}
		delete(want, "Content-Type")
	}
	for k, want := range want {
		if got := header.Values(k); len(got) != 1 || got[0] != want {
			return "", fmt.Errorf("header %s = %q, want %q", k, got, want)
		}
	}
	if !HasBody(status) {
		return "", nil
	}
	if head {
		if len(body) > 0 {
			return "", fmt.Errorf("HEAD answered with a body: %q", body)
		}
		return "", nil
	}
	if status < 400 {
		if !json.Valid(body) {
			return "", fmt.Errorf("status %d with a body that is not JSON: %q", status, body)
		}
		return "", nil
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(body, &members); err != nil {
		return "", fmt.Errorf("status %d: error body %q is not a JSON object: %w", status, body, err)
	}
	if len(members) != 3 || members["code"] == nil || members["message"] == nil || members["status"] == nil {
		return "", fmt.Errorf("status %d: error body %s does not have exactly the members code, message and status", status, body)
	}
	var e httpapi.Error
	d := json.NewDecoder(bytes.NewReader(body))
	d.DisallowUnknownFields()
	if err := d.Decode(&e); err != nil {
		return "", fmt.Errorf("status %d: error body %s: %w", status, body, err)
	}
	switch {
	case e.Status != status:
		return "", fmt.Errorf("error body %s: status member %d, HTTP status %d", body, e.Status, status)
	case !documented(e.Code):
		return "", fmt.Errorf("error body %s: code %q is not documented", body, e.Code)
	case e.Code.Status() != status:
		return "", fmt.Errorf("error body %s: code %q goes with status %d, not %d", body, e.Code, e.Code.Status(), status)
	case e.Message == "":
		return "", fmt.Errorf("error body %s: empty message", body)
	}
	return e.Code, nil
}

// Codes returns every documented error code.
func Codes() []httpapi.Code {
	return []httpapi.Code{
		httpapi.CodeInvalidParameter, httpapi.CodeInvalidBody, httpapi.CodeUnauthorized,
		httpapi.CodeForbidden, httpapi.CodeNotFound, httpapi.CodeMethodNotAllowed,
		httpapi.CodeIdempotencyKeyInUse, httpapi.CodePayloadTooLarge, httpapi.CodeUnsupportedMediaType,
		httpapi.CodeIdempotencyKeyReused, httpapi.CodeRateLimited, httpapi.CodeInternal, httpapi.CodeUnavailable,
	}
}

// documented reports whether code is one of Codes.
func documented(code httpapi.Code) bool {
	for _, c := range Codes() {
		if c == code {
			return true
		}
	}
	return false
}

// Page returns the JSON of the seeded pets with IDs from to to, in order,
// as a list answers them.
func Page(from, to int) string {
	pets := []petstore.Pet{}
	if from >= 1 && to >= from {
		pets = Seeded()[from-1 : to]
	}
	return marshal(pets)
}

// Pet returns the JSON of the seeded pet with ID id.
func Pet(id int) string { return marshal(Seeded()[id-1]) }

// pages returns the JSON of the seeded pets with the given IDs.
func pages(ids ...int) string {
	seeded := Seeded()
	pets := []petstore.Pet{}
	for _, id := range ids {
		pets = append(pets, seeded[id-1])
	}
	return marshal(pets)
}

func marshal(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // pets always encode
	}
	return string(b)
}

// isStrongTag reports whether s is a strong entity tag as the handler makes
// them: 16 lowercase hexadecimal digits in quotes.
func isStrongTag(s string) bool {
	if len(s) != 18 || s[0] != '"' || s[17] != '"' {
		return false
	}
	return strings.Trim(s[1:17], "0123456789abcdef") == ""
}

// CacheControls returns the Cache-Control values of the answers that have
// an ETag: a pet or a full page that others follow, which a private cache
// may keep for an hour, and a full page that none follows yet, which it
// must revalidate before each use.
func CacheControls() []string {
	return []string{"private, max-age=3600", "private, no-cache"}
}

// Tag returns the ETag of an answer with body: a pet, a full page with a
// next page (more) or a full page without.
func Tag(body string, more bool) string {
	var variant byte
	if more {
		variant = 1
	}
	t := respond.NewTag([]byte(body), variant)
	return string(t[:])
}
