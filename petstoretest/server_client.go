package petstoretest

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/httpapi"
)

// headersClause is the rule that every response obeys, whatever the
// subtest checks.
const headersClause = "Every response, errors included, has one X-Content-Type-Options: nosniff and one Cache-Control: no-store, except a 200 or 304 with a strong ETag (a pet, a full page), which only a private cache may keep (Cache-Control: private, max-age=3600, or private, no-cache for a full page that no page follows yet) and which has Vary: Authorization; one with a body (any but a 204 or a 304) has one Content-Type: application/json (application/problem+json for an error when the request's Accept prefers it), and one without has no Content-Type and no body."

// An exchange is a request and the response to it.
type exchange struct {
	req  *http.Request
	resp *http.Response
	body []byte
}

// String describes the request for messages.
func (x *exchange) String() string {
	s := x.req.Method + " " + x.req.URL.String()
	if x.req.GetBody != nil {
		body, _ := x.req.GetBody() // a bytes.Reader's, which cannot fail
		sent, _ := io.ReadAll(body)
		s += " with body " + snippet(sent)
	}
	return s
}

// newRequest returns a request with the endpoint's API key and, when body
// is not nil, Content-Type: application/json.
func (st *serverT) newRequest(method, rawURL string, body []byte) *http.Request {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(st.Context(), method, rawURL, r)
	if err != nil {
		st.Fatalf("making the request %s %s: %v", method, rawURL, err)
	}
	req.Header.Set("Authorization", "Bearer "+st.e.APIKey)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req
}

// do sends req, reads the whole response, up to 8 MiB (a full page of pets
// is far smaller), and checks the headers that every response carries. A
// server that does not answer within 30 seconds fails the subtest instead
// of hanging it.
func (st *serverT) do(req *http.Request) *exchange {
	if st.e.Accept != "" && req.Header.Get("Accept") == "" {
		req.Header.Set("Accept", st.e.Accept)
	}
	ctx, cancel := context.WithTimeout(req.Context(), 30*time.Second)
	defer cancel()
	req = req.WithContext(ctx)
	resp, err := st.client.Do(req)
	if err != nil {
		st.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		st.Fatalf("%s %s: reading the answer: %v", req.Method, req.URL, err)
	}
	x := &exchange{req: req, resp: resp, body: body}
	st.checkCommonHeaders(x)
	return x
}

// send makes a request with the endpoint's API key and sends it, with the
// values of header replacing the request's (a nil value removes one).
func (st *serverT) send(method, rawURL string, body []byte, header http.Header) *exchange {
	req := st.newRequest(method, rawURL, body)
	maps.Copy(req.Header, header)
	return st.do(req)
}

// commonHeaders is what checkCommonHeaders compares.
type commonHeaders struct {
	ContentType        []string // the media types, without parameters
	CacheControl       []string
	ContentTypeOptions []string
	Vary               []string
	StrongTag          bool // there is exactly one ETag, and it is strong
}

// tagged are the Cache-Control values that headersClause allows with an
// ETag, the second for a full page that no page follows yet.
var tagged = []string{"private, max-age=3600", "private, no-cache"}

func (st *serverT) checkCommonHeaders(x *exchange) {
	st = st.under(headersClause)
	h := x.resp.Header
	got := commonHeaders{CacheControl: h.Values("Cache-Control"), ContentTypeOptions: h.Values("X-Content-Type-Options"), Vary: h.Values("Vary")}
	for _, v := range h.Values("Content-Type") {
		if mt, _, err := mime.ParseMediaType(v); err == nil {
			v = mt
		}
		got.ContentType = append(got.ContentType, v)
	}
	want := commonHeaders{ContentType: []string{"application/json"}, CacheControl: []string{"no-store"}, ContentTypeOptions: []string{"nosniff"}}
	if x.resp.StatusCode >= 400 && httpapi.PrefersProblem(x.req) {
		want.ContentType = []string{httpapi.MediaTypeProblem}
	}
	if tags := h.Values("ETag"); len(tags) > 0 || x.resp.StatusCode == http.StatusNotModified {
		got.StrongTag = len(tags) == 1 && len(tags[0]) > 2 && strings.HasPrefix(tags[0], `"`) && strings.HasSuffix(tags[0], `"`)
		want.StrongTag, want.Vary = true, []string{"Authorization"}
		want.CacheControl = got.CacheControl
		if len(got.CacheControl) != 1 || !slices.Contains(tagged, got.CacheControl[0]) {
			want.CacheControl = tagged[:1]
		}
		if s := x.resp.StatusCode; s != http.StatusOK && s != http.StatusNotModified {
			st.Errorf("%s: %d response with an ETag %q: only a 200 or a 304 has one", x, s, tags)
		}
	}
	// All but a 1xx, a 204 and a 304 have a body, and so a Content-Type (RFC 9110, section 6.4.1).
	if s := x.resp.StatusCode; s < 200 || s == http.StatusNoContent || s == http.StatusNotModified {
		want.ContentType = nil
		if len(x.body) > 0 {
			st.Errorf("%s: %d response with a body of %d bytes", x, s, len(x.body))
		}
	}
	diff(st, fmt.Sprintf("%s: %d response headers", x, x.resp.StatusCode), want, got)
}

func snippet(body []byte) string { return fmt.Sprintf("%.300q", body) }

// wantStatus reports a violation when x's status is not want, and tells
// whether it was.
func (st *serverT) wantStatus(x *exchange, want int) bool {
	if note := routerAnswer(x); note != "" && x.resp.StatusCode != want {
		st.Errorf("%s: %s; want %d", x, note, want)
		return false
	}
	return diff(st, fmt.Sprintf("%s: status (body %s)", x, snippet(x.body)), want, x.resp.StatusCode)
}

// routerAnswer returns, for an error answer without the handler's JSON
// error body, a sentence saying so: a router in front of the handler
// answered, not the handler. It returns "" for any other answer, and for
// HEAD, whose answers have no body.
func routerAnswer(x *exchange) string {
	var members map[string]json.RawMessage
	if x.resp.StatusCode < 400 || x.req.Method == http.MethodHead || json.Unmarshal(x.body, &members) == nil && members["code"] != nil {
		return ""
	}
	return fmt.Sprintf("the method %q was answered %d without the handler's JSON error body (%s), so a router in front of the handler answered, not the handler",
		x.req.Method, x.resp.StatusCode, snippet(x.body))
}

// errorShape is what wantError compares of an error response.
type errorShape struct {
	HTTPStatus       int
	Members          []string // the members of the body, sorted
	Code             string
	Status           int // the body's status member
	HasMessage       bool
	Type, Title      string // which follow from the code (httpapi.Code.Type and Title)
	BadErrors        string // what is wrong with the errors member, or ""
	EchoesCredential string // a credential of the request that the answer repeats
	Body             string // only when the body is not a JSON object
}

// badFieldErrors describes what is wrong with the errors member of an
// error body, or returns "": it must be a non-empty array of entries, each
// with a pointer or a parameter, and a detail.
func badFieldErrors(v json.RawMessage) string {
	var entries []httpapi.FieldError
	d := json.NewDecoder(bytes.NewReader(v))
	d.DisallowUnknownFields()
	if err := d.Decode(&entries); err != nil || len(entries) == 0 {
		return "errors is not a non-empty array of {pointer or parameter, detail}: " + string(v)
	}
	for _, e := range entries {
		if (e.Pointer == "") == (e.Parameter == "") || e.Detail == "" {
			return fmt.Sprintf("an entry of errors needs a pointer or a parameter, and a detail: %+v", e)
		}
	}
	return ""
}

// wantError reports a violation when x is not an error response with the
// given status and code and the body {"code","message","status","type",
// "title"}, with "errors" where the server lists the problems with fields.
func (st *serverT) wantError(x *exchange, status int, code string) {
	what := fmt.Sprintf("%s: error response", x)
	echo := st.echoedCredential(x)
	if note := routerAnswer(x); note != "" {
		if echo != "" {
			note += "; " + echo
		}
		st.Errorf("%s: %s; want %d %s", x, note, status, code)
		return
	}
	c := httpapi.Code(code)
	want := errorShape{HTTPStatus: status, Members: []string{"code", "message", "status", "title", "type"}, Code: code, Status: status,
		HasMessage: true, Type: c.Type(), Title: c.Title()}
	got := errorShape{HTTPStatus: x.resp.StatusCode}
	if x.req.Method == http.MethodHead {
		want, got.Body = errorShape{HTTPStatus: status}, string(x.body)
	} else {
		var b struct {
			Code, Message, Type, Title string
			Status                     int
		}
		members, err := objectMembers(x.body)
		if err != nil {
			got.Body = string(x.body)
		}
		_ = json.Unmarshal(x.body, &b)
		got.Members = slices.Sorted(maps.Keys(members))
		got.Code, got.Status, got.HasMessage, got.Type, got.Title = b.Code, b.Status, b.Message != "", b.Type, b.Title
		if members["errors"] != nil {
			want.Members = slices.Sorted(slices.Values(append(want.Members, "errors")))
			got.BadErrors = badFieldErrors(members["errors"])
		}
		if echo != "" {
			got.EchoesCredential, what = "yes", what+" ("+echo+")"
		}
	}
	diff(st, what, want, got)
}

// objectMembers returns the members of the JSON object raw, refusing
// anything else and an object that gives a member twice, which
// encoding/json would take silently, the last one winning.
func objectMembers(raw []byte) (map[string]json.RawMessage, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("not a JSON object: %.100s", raw)
	}
	members := map[string]json.RawMessage{}
	for d.More() {
		k, err := d.Token()
		var v json.RawMessage
		if err == nil {
			err = d.Decode(&v)
		}
		if err != nil {
			return nil, fmt.Errorf("not a JSON object: %v: %.100s", err, raw)
		}
		if _, twice := members[k.(string)]; twice {
			return nil, fmt.Errorf("member %q is given twice: %.300s", k, raw)
		}
		members[k.(string)] = v
	}
	if _, err := d.Token(); err != nil || d.More() {
		return nil, fmt.Errorf("not one JSON object: %.100s", raw)
	}
	return members, nil
}

// decodePet decodes one pet of the wire format strictly: the members id,
// name and categoryId, and status only when the pet has one.
func decodePet(raw json.RawMessage) (petstore.Pet, error) {
	var p petstore.Pet
	members, err := objectMembers(raw)
	if err != nil {
		return p, err
	}
	for _, k := range []string{"id", "name", "categoryId"} {
		if _, ok := members[k]; !ok {
			return p, fmt.Errorf("member %q is missing: %.300s", k, raw)
		}
	}
	for k := range members {
		if !slices.Contains([]string{"id", "name", "categoryId", "status"}, k) {
			return p, fmt.Errorf("unknown member %q: %.300s", k, raw)
		}
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return p, fmt.Errorf("%v: %.300s", err, raw)
	}
	if _, ok := members["status"]; ok && !p.Status.Valid() {
		return p, fmt.Errorf("status %s is not a status; a pet without a status has no status member: %.300s", members["status"], raw)
	}
	return p, nil
}

// wantPet reports a violation when x is not an answer with status and one
// pet, which it returns.
func (st *serverT) wantPet(x *exchange, status int) (petstore.Pet, bool) {
	if !st.wantStatus(x, status) {
		return petstore.Pet{}, false
	}
	p, err := decodePet(x.body)
	if err != nil {
		st.Errorf("%s: the body is not a pet: %v", x, err)
	}
	return p, err == nil
}

// wantPets reports a violation when x is not a 200 with a JSON array of
// pets, which it returns.
func (st *serverT) wantPets(x *exchange) ([]petstore.Pet, bool) {
	var raws []json.RawMessage
	if !st.wantStatus(x, http.StatusOK) {
		return nil, false
	}
	if err := json.Unmarshal(x.body, &raws); err != nil || raws == nil {
		st.Errorf("%s: the body is not a JSON array: %s", x, snippet(x.body))
		return nil, false
	}
	pets := make([]petstore.Pet, len(raws))
	for i, raw := range raws {
		var err error
		if pets[i], err = decodePet(raw); err != nil {
			st.Errorf("%s: element %d is not a pet: %v", x, i, err)
			return nil, false
		}
	}
	return pets, true
}

// linkPattern matches one link of a Link header (RFC 8288) at the start of
// the rest of the header: its target and its parameters, each name=value or
// name="quoted value".
var (
	linkPattern  = regexp.MustCompile(`^[ \t,]*<([^>]*)>((?:[ \t]*;[ \t]*[^\s=;,]+[ \t]*=[ \t]*(?:"(?:[^"\\]|\\.)*"|[^\s;,"]*))*)[ \t]*(?:,|$)`)
	paramPattern = regexp.MustCompile(`;[ \t]*([^\s=;,]+)[ \t]*=[ \t]*(?:"((?:[^"\\]|\\.)*)"|([^\s;,"]*))`)
	unquote      = regexp.MustCompile(`\\(.)`)
)

// linkRel returns the target of x's link with relation rel resolved
// against the request's URL, or nil when there is none. It reports a
// violation when the Link header cannot be parsed or has rel twice.
func (st *serverT) linkRel(x *exchange, rel string) *url.URL {
	var found *url.URL
	for _, v := range x.resp.Header.Values("Link") {
		for rest := v; strings.Trim(rest, " \t,") != ""; {
			m := linkPattern.FindStringSubmatch(rest)
			if m == nil {
				st.Errorf("%s: Link header %q: cannot parse %q", x, v, rest)
				return nil
			}
			rest = rest[len(m[0]):]
			if !slices.ContainsFunc(paramPattern.FindAllStringSubmatch(m[2], -1), func(p []string) bool {
				return strings.EqualFold(p[1], "rel") && slices.Contains(strings.Fields(strings.ToLower(unquote.ReplaceAllString(p[2], "$1")+p[3])), rel)
			}) {
				continue
			}
			ref, err := url.Parse(m[1])
			if found != nil || err != nil {
				st.Errorf("%s: a second link with rel=%q, or one that is not a URL (%v): %q", x, rel, err, x.resp.Header.Values("Link"))
				return nil
			}
			found = x.req.URL.ResolveReference(ref)
		}
	}
	return found
}

// echoedCredential describes where x repeats, in leakPlaces, a credential
// that its request sent (the part of its Authorization header after the
// scheme, and the endpoint's key wherever the header holds it), or returns
// "". Only a whole token counts, so that the key "key" does not occur in
// "Idempotency-Key" or "monkey"; nor does the server's own text: the
// request is sent again with made-up credentials, and a credential is
// echoed only when it occurs more often in the first answer, or the second
// has another status. HEAD is not checked: its answer has no body.
func (st *serverT) echoedCredential(x *exchange) string {
	if x.req.Method == http.MethodHead {
		return ""
	}
	auth := x.req.Header.Get("Authorization")
	_, rest, _ := strings.Cut(strings.TrimSpace(auth), " ")
	creds := slices.DeleteFunc([]string{strings.TrimSpace(rest), st.e.APIKey}, func(c string) bool { return c == "" || !strings.Contains(auth, c) })
	slices.SortFunc(creds, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	creds = slices.Compact(creds)
	var ref *exchange // the answer to the request with made-up credentials
	for _, c := range creds {
		n, where := countToken(leakPlaces(x), c)
		if n == 0 {
			continue
		}
		if ref == nil {
			madeUp := auth
			for _, c := range creds {
				madeUp = strings.ReplaceAll(madeUp, c, "petstoretest-"+rand.Text())
			}
			ref = st.resendWith(x, madeUp)
		}
		if m, _ := countToken(leakPlaces(ref), c); ref.resp.StatusCode == x.resp.StatusCode && m >= n {
			continue // the server's own text, not the credential
		}
		return fmt.Sprintf("the answer repeats the credential %q of the request's header Authorization: %s; in %s", c, auth, snippet([]byte(where)))
	}
	return ""
}

// leakPlaces returns the places of x where a credential could leak: its
// header values, and the string values of its JSON body (or the body, when
// it is not JSON) but for an error's code, type and title, which wantError
// requires to be the API's own words.
func leakPlaces(x *exchange) []string {
	places := slices.Concat(slices.Collect(maps.Values(x.resp.Header))...)
	var body any
	if json.Unmarshal(x.body, &body) != nil {
		return append(places, string(x.body))
	}
	if m, ok := body.(map[string]any); ok {
		maps.DeleteFunc(m, func(k string, _ any) bool { return k == "code" || k == "type" || k == "title" })
	}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			places = append(places, v)
		case []any:
			for _, e := range v {
				walk(e)
			}
		case map[string]any:
			walk(slices.Collect(maps.Values(v)))
		}
	}
	walk(body)
	return places
}

// resendWith sends x's request again with the Authorization header set to
// auth and returns the answer.
func (st *serverT) resendWith(x *exchange, auth string) *exchange {
	req := x.req.Clone(st.Context())
	if x.req.GetBody != nil {
		req.Body, _ = x.req.GetBody() // a bytes.Reader's, which cannot fail
	}
	req.Header.Set("Authorization", auth)
	return st.do(req)
}

// countToken returns how often c occurs in places with no token character
// (of token68, RFC 9110, and of bearer tokens) right before or after it, and
// the first place where it does.
func countToken(places []string, c string) (n int, first string) {
	isToken := func(b byte) bool {
		return 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9' || strings.IndexByte("-._~+/=", b) >= 0
	}
	for _, s := range places {
		for i := 0; ; {
			j := strings.Index(s[i:], c)
			if j < 0 {
				break
			}
			start, end := i+j, i+j+len(c)
			if (start == 0 || !isToken(s[start-1])) && (end == len(s) || !isToken(s[end])) {
				n++
				first = cmp.Or(first, s)
			}
			i = start + 1
		}
	}
	return n, first
}

// A request is one request that a rule sends, and the answer that it must
// get whatever the store holds.
type request struct {
	method string // GET when empty
	path   string // under the base URL, with the query
	body   string
	// header replaces, for the keys that it has (canonical), the
	// endpoint's Authorization and, for a request with a body,
	// Content-Type: application/json; a nil value removes the header.
	header http.Header

	status int
	code   string // the error's code; "" for a success
	// want holds headers that the answer carries with exactly this one
	// value, or does not carry when the value is "". Location, Allow,
	// Accept-Post, Retry-After and WWW-Authenticate must be absent unless
	// they are named here, spelled so.
	want map[string]string
}

// sendAll sends each of reqs and checks its answer. The pets that a rejected
// request names with st.name must not be stored: it looks for them once,
// at the end.
func (st *serverT) sendAll(reqs []request) {
	var rejected []string
	names := regexp.MustCompile(`"(` + regexp.QuoteMeta(st.names) + `[^"]*)"`)
	for _, r := range reqs {
		method := cmp.Or(r.method, http.MethodGet)
		var body []byte
		if r.body != "" || method == http.MethodPost {
			body = []byte(r.body)
		}
		x := st.send(method, st.url(r.path), body, r.header)
		if r.code != "" {
			st.wantError(x, r.status, r.code)
		} else {
			st.wantStatus(x, r.status)
		}
		for _, k := range []string{"Location", "Allow", "Accept-Post", "Retry-After", "WWW-Authenticate"} {
			if _, ok := r.want[k]; !ok && len(x.resp.Header.Values(k)) > 0 {
				st.Errorf("%s: header %s %q, want none", x, k, x.resp.Header.Values(k))
			}
		}
		for k, v := range r.want {
			diff(st, fmt.Sprintf("%s: header %s", x, k), slices.DeleteFunc([]string{v}, func(v string) bool { return v == "" }), x.resp.Header.Values(k))
		}
		if x.resp.StatusCode >= 400 {
			for _, m := range names.FindAllSubmatch(body, -1) {
				rejected = append(rejected, string(m[1]))
			}
		}
	}
	if len(rejected) > 0 {
		_, all := st.collect(st.url("/pets?limit=100"), nil, nil)
		stored := slices.DeleteFunc(all, func(p petstore.Pet) bool { return !slices.Contains(rejected, p.Name) })
		diff(st, "pets created by rejected requests", []petstore.Pet{}, stored)
	}
}

// onEachOperation returns a request for each operation with the
// Authorization header values auth (none when auth is nil), each answered
// 401 unauthorized with the header want.
func (st *serverT) onEachOperation(auth []string, want map[string]string) []request {
	reqs := []request{{path: "/pets"}, {method: http.MethodHead, path: "/pets"}, {method: http.MethodPost, path: "/pets", body: st.validBody()}, {path: "/pets/1"}}
	for i := range reqs {
		reqs[i].header, reqs[i].status, reqs[i].code, reqs[i].want = http.Header{"Authorization": auth}, 401, "unauthorized", want
	}
	return reqs
}

// validBody returns the body of a valid create, with a name unique to the
// run.
func (st *serverT) validBody() string {
	return fmt.Sprintf(`{"name":%q,"categoryId":1}`, st.name("Rex"))
}
