package petstore_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/httpapi"
	"github.com/petstore-go/petstore/memstore"
)

// teamToken is the Credential of a host whose callers send X-Team-Token.
var teamToken = petstore.Credential{
	From:      func(r *http.Request) string { return r.Header.Get("X-Team-Token") },
	Challenge: `TeamToken realm="petstore"`,
	Missing:   "a team token is required; send it in the header X-Team-Token",
	Rejected:  "the team token is not valid; send a valid one in the header X-Team-Token",
}

// TestWithCredential: a host that reads the credential from a header of
// its own authenticates by it, ignores Authorization, and answers a
// missing or rejected credential with its own challenge and messages.
func TestWithCredential(t *testing.T) {
	h := newHandler(t, memstore.New(), petstore.WithCredential(teamToken), petstore.WithOpenAPI(false))
	tests := []struct {
		name        string
		header      http.Header
		wantStatus  int
		wantMessage string // of the 401
	}{
		{"team token", http.Header{"Authorization": nil, "X-Team-Token": {testKey}}, 200, ""},
		{"no header", http.Header{"Authorization": nil}, 401, teamToken.Missing},
		{"empty header", http.Header{"Authorization": nil, "X-Team-Token": {""}}, 401, teamToken.Missing},
		{"bearer token only", http.Header{"Authorization": {"Bearer " + testKey}}, 401, teamToken.Missing},
		{"wrong team token", http.Header{"Authorization": nil, "X-Team-Token": {"wrong"}}, 401, teamToken.Rejected},
		{"token no bearer could carry", http.Header{"Authorization": nil, "X-Team-Token": {"wrong token"}}, 401, teamToken.Rejected},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := serve(h, newRequest(t, http.MethodGet, "/v1/pets", "", tt.header))
			checkResponse(t, w)
			if w.Code != tt.wantStatus {
				t.Fatalf("status %d %s, want %d", w.Code, w.Body, tt.wantStatus)
			}
			if tt.wantStatus != 401 {
				return
			}
			body := decode[httpapi.Error](t, w)
			got := []string{w.Header().Get("Www-Authenticate"), body.Message}
			if diff := cmp.Diff([]string{teamToken.Challenge, tt.wantMessage}, got); diff != "" {
				t.Errorf("challenge and message (-want +got):\n%s", diff)
			}
		})
	}
}

// TestWithCredentialScrubbed: the host's credential, like a bearer token,
// is scrubbed from what is logged, and names the caller when the
// Authenticator names none.
func TestWithCredentialScrubbed(t *testing.T) {
	const secret = "team-secret-123"
	var logs logBuffer
	var principal string
	failing := petstore.AuthenticatorFunc(func(ctx context.Context, _ petstore.Operation, token string) (context.Context, error) {
		if token == secret {
			return ctx, nil
		}
		return nil, fmt.Errorf("the team service is down, asked for %s", token)
	})
	h := newHandler(t, memstore.New(), petstore.WithCredential(teamToken), petstore.WithOpenAPI(false), petstore.WithAuthenticator(failing),
		petstore.WithLogger(slog.New(slog.NewJSONHandler(&logs, nil))),
		petstore.WithObserver(func(_ context.Context, o petstore.Observation) { principal = o.Principal }))
	w := serve(h, newRequest(t, http.MethodGet, "/v1/pets", "", http.Header{"X-Team-Token": {"other-" + secret}}))
	if w.Code != http.StatusServiceUnavailable {
		t.Fatalf("status %d, want 503", w.Code)
	}
	if strings.Contains(logs.String(), secret) || !strings.Contains(logs.String(), "[REDACTED]") {
		t.Errorf("log %s: want the credential scrubbed", logs.String())
	}
	serve(h, newRequest(t, http.MethodGet, "/v1/pets", "", http.Header{"X-Team-Token": {secret}}))
	if !strings.HasPrefix(principal, "token-") || strings.Contains(principal, secret) {
		t.Errorf("principal %q, want a token- fingerprint of the credential", principal)
	}
}

// A host whose callers send their key in X-Team-Token says so, and what
// a caller without one is told.
func ExampleWithCredential() {
	h, err := petstore.New(
		petstore.WithStore(memstore.New()),
		petstore.WithAuthenticator(petstore.NamedAPIKeys(petstore.APIKey{Principal: "team-a", Key: "team-a-key"})),
		petstore.WithCredential(petstore.Credential{
			From:      func(r *http.Request) string { return r.Header.Get("X-Team-Token") },
			Challenge: `TeamToken realm="petstore"`,
			Missing:   "a team token is required; send it in the header X-Team-Token",
			Rejected:  "the team token is not valid; send a valid one in the header X-Team-Token",
		}),
		petstore.WithOpenAPI(false), // it would describe the bearer token
	)
	if err != nil {
		panic(err)
	}
	r := httptest.NewRequest(http.MethodGet, "/v1/pets", nil)
	r.Header.Set("X-Team-Token", "team-a-key")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	fmt.Print(w.Code, " ", w.Body.String())

	w = httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/v1/pets", nil))
	fmt.Println(w.Code, w.Header().Get("WWW-Authenticate"))
	fmt.Print(w.Body.String())
	// Output:
	// 200 []
	// 401 TeamToken realm="petstore"
	// {"code":"unauthorized","message":"a team token is required; send it in the header X-Team-Token","status":401,"type":"https://github.com/petstore-go/petstore/blob/main/docs/errors.md#unauthorized","title":"Unauthorized"}
}
