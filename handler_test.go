package petstore_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/httpapi"
)

// TestWire sends the real handler, in process, the requests that
// petstoretest.TestServer, which checks the wire rules over a real
// connection (TestConformanceServer), does not send: those that net/http's
// client or a proxy would refuse, those outside the base path or that a
// host's router may clean or redirect (the handler matches paths exactly),
// and those whose exact answer depends on the pets that the store holds and
// on the form of the cursor. It checks the exact answer and that the store is
// unchanged.
func TestWire(t *testing.T) {
	seeded := snapshot(t, seededStore(t))
	page := func(from, to int) string { return marshal(t, seeded[from-1:to]) }
	invalid := map[string]string{"Www-Authenticate": `Bearer realm="petstore", error="invalid_token"`, "Connection": "close"}
	for _, tt := range []struct {
		name, target string
		header       http.Header
		status       int
		code         httpapi.Code
		want         map[string]string // headers with exactly this value, or none for ""
		body         string            // the exact body of a success
	}{
		{"token with a header injection", "/v1/pets", http.Header{"Authorization": {"Bearer " + testKey + "\r\nX-Admin: 1"}}, 401, "unauthorized", invalid, ""},
		{"1 MiB token", "/v1/pets", http.Header{"Authorization": {"Bearer " + strings.Repeat("k", 1<<20)}}, 401, "unauthorized", invalid, ""},
		{"100k-character path", "/v1/" + strings.Repeat("a", 100_000), nil, 404, "not_found", nil, ""},
		{"petId of 100k digits", "/v1/pets/" + strings.Repeat("9", 100_000), nil, 400, "invalid_parameter", nil, ""},
		{"other version", "/v2/pets", nil, 404, "not_found", nil, ""},
		{"double slash before pets", "/v1//pets", nil, 404, "not_found", nil, ""},
		{"double slash before a petId", "/v1/pets//1", nil, 404, "not_found", nil, ""},
		{"dot-dot segment", "/v1/pets/../pets", nil, 404, "not_found", nil, ""},
		{"encoded slash after pets", "/v1/pets%2F1", nil, 404, "not_found", nil, ""},
		{"petId dot-dot", "/v1/pets/..", nil, 400, "invalid_parameter", nil, ""},
		{"petId an encoded slash", "/v1/pets/%2F", nil, 400, "invalid_parameter", nil, ""},
		{"petId with an encoded slash", "/v1/pets/1%2F2", nil, 400, "invalid_parameter", nil, ""},
		{"no base path", "/pets", nil, 404, "not_found", nil, ""},
		{"petId percent-encoded", "/v1/pets/%31", nil, 200, "", nil, marshal(t, seeded[0])},
		{"default page", "/v1/pets", nil, 200, "", map[string]string{"Link": `<?limit=20&cursor=k>; rel="next"`}, page(1, 20)},
		{"limit 2 after a cursor", "/v1/pets?limit=2&cursor=2", nil, 200, "", map[string]string{"Link": `<?limit=2&cursor=4>; rel="next"`}, page(3, 4)},
		{"by status with limit", "/v1/pets?status=sold&limit=1", nil, 200, "", map[string]string{"Link": `<?limit=1&status=sold&cursor=3>; rel="next"`}, page(3, 3)},
		{"limit equal to what is left", "/v1/pets?limit=4&cursor=q", nil, 200, "", map[string]string{"Link": ""}, page(27, 30)},
		{"cursor at the end", "/v1/pets?cursor=u", nil, 200, "", map[string]string{"Link": ""}, "[]\n"},
		{"cursor past the end", "/v1/pets?cursor=zzzzzz", nil, 200, "", map[string]string{"Link": ""}, "[]\n"},
		{"cursor that is a word past the end", "/v1/pets?cursor=garbage", nil, 200, "", map[string]string{"Link": ""}, "[]\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			env := newEnv(t)
			before := snapshot(t, env.store)
			w := env.serve(newRequest(t, "", tt.target, "", tt.header))
			if code := checkResponse(t, w); w.Code != tt.status || code != tt.code {
				t.Errorf("status %d %q, want %d %q; body %.300s", w.Code, code, tt.status, tt.code, w.Body)
			}
			for k, v := range tt.want {
				if got := w.Header().Values(k); v == "" && len(got) > 0 || v != "" && !slices.Equal(got, []string{v}) {
					t.Errorf("header %s = %q, want %q", k, got, v)
				}
			}
			if tt.body != "" && w.Body.String() != tt.body {
				t.Errorf("body %s, want %s", w.Body, tt.body)
			}
			checkUnchanged(t, env.store, before)
		})
	}
}

// authReader is an Authenticator for the 403 and 503 answers: key "reader"
// may only read, key "down" finds the backend down.
func authReader(ctx context.Context, op petstore.Operation, token string) (context.Context, error) {
	switch {
	case token == "down":
		return nil, errors.New("key server unreachable")
	case token == "reader" && op == petstore.OpCreatePet:
		return nil, petstore.ErrForbidden
	case token == "reader":
		return ctx, nil
	}
	return nil, petstore.ErrUnauthorized
}

// TestAuthenticatorAnswers checks that the handler asks the authenticator
// about the operation of the request, and answers what it says.
func TestAuthenticatorAnswers(t *testing.T) {
	env := newEnv(t, petstore.WithAuthenticator(petstore.AuthenticatorFunc(authReader)))
	reader := http.Header{"Authorization": {"Bearer reader"}}
	tests := []struct {
		name   string
		req    *http.Request
		status int
		code   httpapi.Code
		header map[string]string
	}{
		{"read-only key lists", newRequest(t, "GET", "/v1/pets", "", reader), 200, "", map[string]string{"Connection": ""}},
		{"read-only key gets", newRequest(t, "GET", "/v1/pets/1", "", reader), 200, "", nil},
		{"read-only key may not create", newRequest(t, "POST", "/v1/pets", `{"name":"A","categoryId":1}`, reader), 403, "forbidden", nil},
		{"authenticator down", newRequest(t, "GET", "/v1/pets", "", http.Header{"Authorization": {"Bearer down"}}), 503, "unavailable", map[string]string{"Retry-After": "1"}},
		{"authenticator rejects", newRequest(t, "GET", "/v1/pets", "", http.Header{"Authorization": {"Bearer other"}}), 401, "unauthorized",
			map[string]string{"Www-Authenticate": `Bearer realm="petstore", error="invalid_token"`, "Connection": "close"}},
		{"no key", newRequest(t, "GET", "/v1/pets", "", http.Header{"Authorization": nil}), 401, "unauthorized",
			map[string]string{"Www-Authenticate": `Bearer realm="petstore"`, "Connection": "close"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := snapshot(t, env.store)
			w := env.serve(tt.req)
			if code := checkResponse(t, w); w.Code != tt.status || code != tt.code {
				t.Errorf("status %d %q, want %d %q", w.Code, code, tt.status, tt.code)
			}
			for k, want := range tt.header {
				if got := w.Header().Get(k); got != want {
					t.Errorf("header %s = %q, want %q", k, got, want)
				}
			}
			checkUnchanged(t, env.store, before)
		})
	}
}
