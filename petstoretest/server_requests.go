package petstoretest

import (
	"cmp"
	"fmt"
	"net/http"
	"regexp"
	"slices"
)

// A request is one request that a rule sends, and the answer that it must
// get whatever the store holds.
type request struct {
	method string // GET when empty
	path   string // under the base URL, with the query
	body   string
	// header replaces, for the keys that it has, the endpoint's
	// Authorization and, for a request with a body, Content-Type:
	// application/json; a nil value removes the header.
	header http.Header

	status int
	code   string // the error's code; "" for a success
	// want holds headers that the answer carries with exactly this one
	// value, or does not carry when the value is "". Location, Allow,
	// Accept-Post, Retry-After and WWW-Authenticate must be absent unless
	// they are named here.
	want map[string]string
}

// onlyNamed are the headers that an answer to a request carries only when
// the request names them.
var onlyNamed = []string{"Location", "Allow", "Accept-Post", "Retry-After", "Www-Authenticate"}

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
		req := st.newRequest(method, st.url(r.path), body)
		for k, v := range r.header {
			if v == nil {
				req.Header.Del(k)
			} else {
				req.Header[http.CanonicalHeaderKey(k)] = v
			}
		}
		x := st.do(req)
		x.sent = body
		if r.code != "" {
			st.wantError(x, r.status, r.code)
		} else {
			st.wantStatus(x, r.status)
		}
		want := map[string]string{}
		for k, v := range r.want {
			want[http.CanonicalHeaderKey(k)] = v
		}
		for _, k := range onlyNamed {
			if _, ok := want[k]; !ok && len(x.resp.Header.Values(k)) > 0 {
				st.errorf("%s: header %s %q, want none", x, k, x.resp.Header.Values(k))
			}
		}
		for k, v := range want {
			var values []string
			if v != "" {
				values = []string{v}
			}
			st.diff(fmt.Sprintf("%s: header %s", x, k), values, x.resp.Header.Values(k))
		}
		if x.resp.StatusCode >= 400 {
			for _, m := range names.FindAllSubmatch(body, -1) {
				rejected = append(rejected, string(m[1]))
			}
		}
	}
	if len(rejected) > 0 {
		st.wantNotStored(rejected)
	}
}

// wantNotStored reports the pets named names that the store holds.
func (st *serverT) wantNotStored(names []string) {
	stored := map[string]bool{}
	st.walk(st.url("/pets?limit=100"), func(p listPage) bool {
		for _, pet := range p.pets {
			if slices.Contains(names, pet.Name) {
				stored[pet.Name] = true
			}
		}
		return true
	})
	st.diff("pets created by rejected requests", map[string]bool{}, stored)
}

// onEachOperation returns a request for each operation with the
// Authorization header values auth (none when auth is nil), each answered
// with status and code and the header want.
func (st *serverT) onEachOperation(auth []string, status int, code string, want map[string]string) []request {
	header := http.Header{"Authorization": auth}
	return []request{
		{path: "/pets", header: header, status: status, code: code, want: want},
		{method: http.MethodHead, path: "/pets", header: header, status: status, code: code, want: want},
		{method: http.MethodPost, path: "/pets", body: st.validBody(), header: header, status: status, code: code, want: want},
		{path: "/pets/1", header: header, status: status, code: code, want: want},
	}
}

// validBody returns the body of a valid create, with a name unique to the
// run.
func (st *serverT) validBody() string {
	return fmt.Sprintf(`{"name":%q,"categoryId":1}`, st.name("Rex"))
}
