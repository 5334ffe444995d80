package petstore_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/httpapi"
	"github.com/petstore-go/petstore/internal/testkit/wirecases"
)

// TestWire sends every request of the shared table through the real handler
// in process and checks its exact answer (Case.Check), a Content-Length that
// matches the body, and that the store holds exactly what it held before,
// plus the pet of an accepted create.
func TestWire(t *testing.T) {
	cases := wirecases.Cases()
	t.Logf("%d requests", len(cases))
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			env := newEnv(t)
			r, err := c.Request(t.Context(), "")
			if err != nil {
				t.Fatal(err)
			}
			w := env.serve(r)
			if err := c.Check(w.Code, w.Header(), w.Body.Bytes()); err != nil {
				t.Error(err)
			}
			if c.Method != http.MethodHead {
				checkResponse(t, w)
			}
			if diff := cmp.Diff(c.Stored(), snapshot(t, env.store)); diff != "" {
				t.Errorf("store after the request (-want +got):\n%s", diff)
			}
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
		{"read-only key lists", newRequest(t, "GET", "/v1/pets", "", reader), 200, "", nil},
		{"read-only key gets", newRequest(t, "GET", "/v1/pets/1", "", reader), 200, "", nil},
		{"read-only key may not create", newRequest(t, "POST", "/v1/pets", `{"name":"A","categoryId":1}`, reader), 403, "forbidden", nil},
		{"authenticator down", newRequest(t, "GET", "/v1/pets", "", http.Header{"Authorization": {"Bearer down"}}), 503, "unavailable", map[string]string{"Retry-After": "1"}},
		{"authenticator rejects", newRequest(t, "GET", "/v1/pets", "", http.Header{"Authorization": {"Bearer other"}}), 401, "unauthorized", map[string]string{"Www-Authenticate": `Bearer realm="petstore", error="invalid_token"`}},
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
