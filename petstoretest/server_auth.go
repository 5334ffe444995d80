package petstoretest

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/petstore-go/petstore"
)

// petBody returns p as a request body.
func petBody(p petstore.NewPet) []byte {
	b, err := json.Marshal(p)
	if err != nil {
		panic(err) // a NewPet always marshals
	}
	return b
}

// authTargets returns a request for each operation, with the endpoint's key.
func (st *serverT) authTargets() []*http.Request {
	body := petBody(petstore.NewPet{Name: st.name("must not be created"), CategoryID: 1})
	return []*http.Request{
		st.newRequest(http.MethodGet, st.url("/pets"), nil),
		st.newRequest(http.MethodHead, st.url("/pets"), nil),
		st.newRequest(http.MethodPost, st.url("/pets"), body),
		st.newRequest(http.MethodGet, st.url("/pets/1"), nil),
	}
}

// challenge is what wantChallenge compares of a 401 response.
type challenge struct {
	Headers int // the number of WWW-Authenticate headers
	Scheme  string
	Realm   string
	Error   string
}

// anyError tells wantChallenge to accept any error parameter or none.
const anyError = "(any)"

// wantChallenge reports a violation when x does not carry the Bearer
// challenge with the given error parameter ("" for none).
func (st *serverT) wantChallenge(x *exchange, errParam string) {
	want := challenge{Headers: 1, Scheme: "bearer", Realm: "petstore", Error: errParam}
	values := x.resp.Header.Values("WWW-Authenticate")
	got := challenge{Headers: len(values)}
	if len(values) > 0 {
		scheme, params, err := parseChallenge(values[0])
		if err != nil {
			got.Scheme = fmt.Sprintf("unparsable %q: %v", values[0], err)
		} else {
			got.Scheme, got.Realm, got.Error = strings.ToLower(scheme), params["realm"], params["error"]
		}
	}
	if errParam == anyError {
		got.Error = anyError
	}
	st.diff(fmt.Sprintf("%s: WWW-Authenticate %q", x, values), want, got)
}

// unauthorized sends req with the Authorization header set to auth, or
// without one when auth is empty, and checks the 401 answer.
func (st *serverT) unauthorized(req *http.Request, auth, errParam string) {
	req.Header.Del("Authorization")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	x := st.do(req)
	st.wantError(x, http.StatusUnauthorized, "unauthorized")
	st.wantChallenge(x, errParam)
}

func httpAuthMissing(st *serverT) {
	for _, req := range st.authTargets() {
		st.unauthorized(req, "", "")
	}
}

func httpAuthWrongScheme(st *serverT) {
	for _, auth := range []string{
		"Basic " + base64.StdEncoding.EncodeToString([]byte(st.e.APIKey+":")),
		"Token " + st.e.APIKey,
		"Bearer" + st.e.APIKey,
		`Digest username="petstoretest"`,
	} {
		for _, req := range st.authTargets() {
			st.unauthorized(req, auth, "")
		}
	}
}

func httpAuthEmptyToken(st *serverT) {
	for _, auth := range []string{"Bearer", "Bearer ", "Bearer    ", "bearer"} {
		for _, req := range st.authTargets() {
			st.unauthorized(req, auth, "")
		}
	}
}

func httpAuthBadToken(st *serverT) {
	wrong := "petstoretest-" + rand.Text()
	for _, token := range []string{wrong, st.e.APIKey + "x"} {
		for _, req := range st.authTargets() {
			st.unauthorized(req, "Bearer "+token, "invalid_token")
		}
	}
	// A token with characters that no bearer token has cannot be valid.
	for _, req := range st.authTargets() {
		st.unauthorized(req, "Bearer not a token!", anyError)
	}
}

func httpAuthSchemeCase(st *serverT) {
	for _, scheme := range []string{"Bearer", "bearer", "BEARER", "bEaReR"} {
		req := st.newRequest(http.MethodGet, st.url("/pets?limit=1"), nil)
		req.Header.Set("Authorization", scheme+" "+st.e.APIKey)
		x := st.do(req)
		st.wantStatus(x, http.StatusOK)
	}
}

func httpAuthBeforeRouting(st *serverT) {
	for _, tc := range []struct{ method, path string }{
		{http.MethodGet, "/no-such-path"},
		{http.MethodGet, "/store/orders"},
		{http.MethodGet, "/pets/"},
		{http.MethodDelete, "/pets"},
		{http.MethodPut, "/pets/1"},
	} {
		st.unauthorized(st.newRequest(tc.method, st.url(tc.path), nil), "", "")
		st.unauthorized(st.newRequest(tc.method, st.url(tc.path), nil), "Bearer petstoretest-"+rand.Text(), "invalid_token")
	}
}
