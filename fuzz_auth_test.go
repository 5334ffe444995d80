package petstore_test

import (
	"cmp"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/httpapi"
)

// fuzzAuthKeys returns the keys of the auth fuzzer's handler: two at once,
// as during a rotation, one of them with every kind of token68 character.
func fuzzAuthKeys() []string { return []string{testKey, "K3y.two_~+/=="} }

// fuzzAuthWant is the oracle for the Authorization header: exactly one
// header of the Bearer scheme, matched in any case, one or more spaces and
// one of the keys is accepted; no header, several, another scheme or an
// empty token is "missing"; any other token is "invalid".
func fuzzAuthWant(values []string) (accepted, invalid bool) {
	if len(values) != 1 {
		return false, false
	}
	v := values[0]
	if len(v) < len("bearer ") || !strings.EqualFold(v[:len("bearer")], "bearer") || v[len("bearer")] != ' ' {
		return false, false
	}
	token := strings.TrimLeft(v[len("bearer"):], " ")
	if token == "" {
		return false, false
	}
	accepted = slices.Contains(fuzzAuthKeys(), token)
	return accepted, !accepted
}

// FuzzAuthorization sends GET /v1/pets with no, one or two arbitrary
// Authorization headers. Only the oracle's accepted headers get 200; every
// other request gets, header for header and byte for byte, the 401 of a
// request without the header ("missing"), the 401 of a wrong key
// ("invalid"), or the 401 of a header of another scheme with another
// credential (which names the scheme only when it is a registered one),
// whatever the header held, so nothing else of it is ever echoed.
func FuzzAuthorization(f *testing.F) {
	f.Add(uint8(1), "Bearer "+testKey, "")
	f.Add(uint8(2), "Bearer "+testKey, "Bearer "+testKey)
	f.Add(uint8(1), "bEARER   K3y.two_~+/==", "")
	f.Fuzz(func(t *testing.T, n uint8, first, second string) {
		env := newEnv(t, petstore.WithAuthenticator(petstore.APIKeys(fuzzAuthKeys()...)))
		before := snapshot(t, env.store)
		get := func(authorization []string) *http.Request {
			return newRequest(t, http.MethodGet, "/v1/pets", "", http.Header{"Authorization": authorization})
		}
		missing := env.serve(get(nil))
		rejected := env.serve(get([]string{"Bearer not-a-key"}))
		fuzzCheckChallenge(t, missing, `Bearer realm="petstore"`)
		fuzzCheckChallenge(t, rejected, `Bearer realm="petstore", error="invalid_token"`)

		values := []string{first, second}[:n%3]
		if len(values) == 0 {
			values = nil // no header
		}
		r := get(values)
		w := env.serve(r)
		code := checkResponse(t, w)
		checkUnchanged(t, env.store, before)

		accepted, invalid := fuzzAuthWant(values)
		if accepted {
			if w.Code != http.StatusOK {
				t.Fatalf("Authorization %q: status %d %s, want 200", values, w.Code, w.Body)
			}
			return
		}
		want := missing
		var se *httpapi.SchemeError
		if _, err := httpapi.BearerToken(r); errors.As(err, &se) {
			want = env.serve(get([]string{cmp.Or(se.Scheme, "Unregistered") + " credential"}))
		}
		if invalid {
			want = rejected
		}
		if w.Code != http.StatusUnauthorized || code != httpapi.CodeUnauthorized {
			t.Fatalf("Authorization %q: status %d %s, want 401", values, w.Code, w.Body)
		}
		if diff := gocmp.Diff(want.Header(), w.Header()); diff != "" {
			t.Fatalf("Authorization %q: headers differ from the reference 401 (-want +got):\n%s", values, diff)
		}
		if got, want := w.Body.String(), want.Body.String(); got != want {
			t.Fatalf("Authorization %q: body %s, want %s", values, got, want)
		}
	})
}

// fuzzCheckChallenge fails unless w is a 401 unauthorized with the
// WWW-Authenticate challenge want.
func fuzzCheckChallenge(t *testing.T, w *httptest.ResponseRecorder, want string) {
	t.Helper()
	if code := checkResponse(t, w); w.Code != http.StatusUnauthorized || code != httpapi.CodeUnauthorized {
		t.Fatalf("status %d %s, want 401 unauthorized", w.Code, w.Body)
	}
	if got := w.Header().Values("WWW-Authenticate"); len(got) != 1 || got[0] != want {
		t.Fatalf("WWW-Authenticate = %q, want %q", got, want)
	}
}
