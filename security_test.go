package petstore_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/internal/testkit/faultstore"
	"github.com/petstore-go/petstore/memstore"
)

// securityContextKey marks the context that securityAuthenticate returns.
type securityContextKey struct{}

// TestSecurityAPIKeys: only a token equal to one of the keys is accepted,
// with the context passed; prefixes, extensions, other cases, one changed
// byte, the keys run together and the empty token are all rejected with an
// error wrapping ErrUnauthorized. APIKeys without keys, or with only empty
// keys, accepts nothing (and New refuses it, as
// TestNewReportsConfigurationMistakes shows); empty keys beside real ones are
// ignored.
func TestSecurityAPIKeys(t *testing.T) {
	const k1, k2 = "s3cr3t-key-AAAAAAAAAAAAAAAAAAAAAAAA", "rotated-KEY-bbbb"
	var nearMisses []string
	for _, k := range []string{k1, k2} {
		for i := range len(k) {
			nearMisses = append(nearMisses, k[:i]) // every prefix, the empty one too
		}
		nearMisses = append(nearMisses,
			k+"A", k+"=", "A"+k, strings.ToUpper(k), strings.ToLower(k),
			k[:len(k)-1]+string(k[len(k)-1]+1), string(k[0]+1)+k[1:],
			" "+k, k+" ", k+"\x00")
	}
	nearMisses = append(nearMisses, k1+k2, k2+k1, strings.Repeat(k1, 1000))
	anything := []string{"", " ", "x", "Bearer", "null", "\x00"}
	ctx := context.WithValue(context.Background(), securityContextKey{}, "caller")
	for _, tc := range []struct{ keys, accepted, rejected []string }{
		{[]string{k1, k2}, []string{k1, k2}, nearMisses},
		{nil, nil, anything},
		{[]string{""}, nil, anything},
		{[]string{"", ""}, nil, anything},
		{[]string{"", "k", ""}, []string{"k"}, []string{""}},
	} {
		a := petstore.APIKeys(tc.keys...)
		for _, token := range tc.accepted {
			if got, err := a.Authenticate(ctx, petstore.OpCreatePet, token); err != nil || got.Value(securityContextKey{}) != "caller" {
				t.Errorf("APIKeys(%q) on %q: %v; want it accepted, with the context passed", tc.keys, token, err)
			}
		}
		for _, token := range tc.rejected {
			if _, err := a.Authenticate(ctx, petstore.OpListPets, token); !errors.Is(err, petstore.ErrUnauthorized) {
				t.Errorf("APIKeys(%q) on %.80q: err = %v, want ErrUnauthorized", tc.keys, token, err)
			}
		}
	}
}

// Credentials of the leak test: two valid keys, and tokens that are wrong,
// malformed, make the authenticator fail or make it panic. None may appear
// in a log line, a response header or a response body.
const (
	securityKey1         = "live-key-Q7x9Zp2M"
	securityKey2         = "next-key-R4t8Yw1N"
	securityWrongKey     = "live-key-Q7x9Zp2N"
	securityMalformed    = "live-key!Q7x9Zp2M"
	securityAuthFails    = "fail-auth-K8j3Hs"
	securityAuthPanics   = "panic-auth-L2m9Qd"
	securityForbiddenKey = "read-only-P5v6Nb"
)

// securityAuthenticator accepts the two keys for every operation and the
// read-only key for reads, and misbehaves with its own tokens: it fails
// with an error, or panics, holding the token.
func securityAuthenticator() petstore.Authenticator {
	keys := petstore.APIKeys(securityKey1, securityKey2)
	return petstore.AuthenticatorFunc(func(ctx context.Context, op petstore.Operation, token string) (context.Context, error) {
		switch token {
		case securityAuthFails:
			return nil, fmt.Errorf("key service: lookup of %q: connection reset", token)
		case securityAuthPanics:
			panic("key cache corrupt at entry " + token)
		case securityForbiddenKey:
			if op == petstore.OpCreatePet {
				return nil, fmt.Errorf("key %s is read-only: %w", token, petstore.ErrForbidden)
			}
			return ctx, nil
		}
		return keys.Authenticate(ctx, op, token)
	})
}

// securityRequests are requests of every kind, failures included: known and
// unknown paths, allowed and other methods, pets that exist and pets that do
// not, valid and invalid parameters and bodies.
var securityRequests = []struct{ method, target, contentType, body string }{
	{http.MethodGet, "/v1/pets", "", ""},
	{http.MethodGet, "/v1/pets?limit=0", "", ""},
	{http.MethodGet, "/v1/pets?status=sold&limit=1", "", ""},
	{http.MethodPost, "/v1/pets", "application/json", `{"name":"Rex","categoryId":1}`},
	{http.MethodPost, "/v1/pets", "application/json", `{"name":`},
	{http.MethodPost, "/v1/pets", "text/plain", `hello`},
	{http.MethodPost, "/v1/pets", "application/json", `{"name":"` + strings.Repeat("a", 1<<20) + `","categoryId":1}`},
	{http.MethodGet, "/v1/pets/1", "", ""},
	{http.MethodGet, "/v1/pets/999", "", ""},
	{http.MethodGet, "/v1/pets/abc", "", ""},
	{http.MethodGet, "/v1/pets/", "", ""},
	{http.MethodGet, "/v1/pets/1/photos", "", ""},
	{http.MethodDelete, "/v1/pets", "", ""},
	{http.MethodPut, "/v1/pets/1", "application/json", `{}`},
	{http.MethodOptions, "/v1/pets", "", ""},
	{http.MethodGet, "/v1/store/orders", "", ""},
	{http.MethodGet, "/v2/pets", "", ""},
	{http.MethodGet, "/", "", ""},
	{http.MethodGet, "/v1/pets/%2F", "", ""},
	{http.MethodPost, "/v1/pets", "", `{"name":"` + securityKey1 + `"}`},
	{http.MethodTrace, "/v1/pets/1", "", ""}, // a method that no route serves: 405
	{http.MethodGet, "/v1/nowhere", "", ""},
	{http.MethodHead, "/v1/pets", "", ""}, {http.MethodHead, "/v1/pets/1", "", ""},
	{http.MethodHead, "/v1/pets/999", "", ""}, {http.MethodHead, "/nowhere", "", ""},
}

// TestSecurityNoCredentialLeaks runs every kind of request, failures
// included, with every kind of credential, through a handler whose
// authenticator and store put the credential into their errors and panics,
// and searches the whole log and every response for the credentials.
func TestSecurityNoCredentialLeaks(t *testing.T) {
	log := &logBuffer{}
	env := faultsNewEnv(t, petstore.WithAuthenticator(securityAuthenticator()),
		petstore.WithLogger(slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	// The store's faults hold the key of the request that meets them, as a
	// store might that puts the caller's identity into its errors.
	faults := []func(key string) faultstore.Fault{
		func(string) faultstore.Fault { return faultstore.Fault{} },
		func(key string) faultstore.Fault {
			return faultstore.Fault{Err: errors.New("audit insert for caller " + key + " failed")}
		},
		func(key string) faultstore.Fault {
			return faultstore.Fault{Err: fmt.Errorf("caller %s: %w", key, petstore.ErrUnavailable)}
		},
		func(key string) faultstore.Fault { return faultstore.Fault{Panic: "nil map write for caller " + key} },
		func(key string) faultstore.Fault {
			return faultstore.Fault{Panic: fmt.Errorf("caller %s: %w", key, errors.New("bad state"))}
		},
	}
	tokens := []string{securityKey1, securityKey2, securityWrongKey, securityMalformed, securityAuthFails, securityAuthPanics, securityForbiddenKey}
	authHeaders := [][]string{nil, {"Bearer " + securityKey1, "Bearer " + securityKey2}, {"Basic " + securityKey1}}
	for _, tok := range tokens {
		authHeaders = append(authHeaders, []string{"Bearer " + tok})
	}

	var responses strings.Builder
	statuses := map[int]int{}
	n := 0
	for _, fault := range faults {
		for _, auth := range authHeaders {
			for _, q := range securityRequests {
				key := ""
				if len(auth) == 1 {
					key = strings.TrimPrefix(auth[0], "Bearer ")
				}
				for _, m := range faultstore.Methods() {
					env.fs.Set(m, fault(key))
				}
				r := httptest.NewRequest(q.method, q.target, strings.NewReader(q.body))
				r.Header["Authorization"] = auth
				r.Header.Set("Content-Type", "application/json")
				if q.contentType != "" {
					r.Header.Set("Content-Type", q.contentType)
				}
				w := serve(env.h, r)
				// A body that the client sent may be echoed; nothing else.
				body := strings.ReplaceAll(w.Body.String(), securityKey1+`"`, "")
				fmt.Fprintf(&responses, "%d %v %s\n", w.Code, w.Header(), body)
				statuses[w.Code]++
				n++
			}
		}
	}
	logs := log.String()
	t.Logf("%d requests, statuses %v, %d bytes of log", n, statuses, len(logs))

	// The run must have met every failure that logs, or it proves nothing.
	for _, want := range []string{"petstore: authenticator failed", "petstore: panic serving request", "petstore: store failed", "petstore: store unavailable"} {
		if !strings.Contains(logs, want) {
			t.Errorf("the log has no %q record", want)
		}
	}
	for _, status := range []int{200, 201, 400, 401, 403, 404, 405, 500, 503} {
		if statuses[status] == 0 {
			t.Errorf("no response had status %d", status)
		}
	}
	for _, tok := range tokens {
		if i := strings.Index(logs, tok); i >= 0 {
			t.Errorf("the log holds the credential %q: …%s…", tok, logs[max(0, i-200):min(len(logs), i+50)])
		}
		if i := strings.Index(responses.String(), tok); i >= 0 {
			s := responses.String()
			t.Errorf("a response holds the credential %q: …%s…", tok, s[max(0, i-200):min(len(s), i+50)])
		}
	}
}

// TestSecurityUnauthenticatedLearnNothing: without a valid key, every
// request gets the same answer, header for header and byte for byte: known
// and unknown paths, allowed and other methods, pets that exist and pets
// that do not, valid and invalid parameters and bodies. The store is never
// called. (The OpenAPI document, served without authentication on purpose,
// is the one exception; see WithOpenAPI.)
func TestSecurityUnauthenticatedLearnNothing(t *testing.T) {
	credentials := map[string][]string{
		"no header":       nil,
		"empty token":     {"Bearer "},
		"other scheme":    {"Basic " + testKey},
		"two headers":     {"Bearer " + testKey, "Bearer " + testKey},
		"wrong key":       {"Bearer wrong-key"},
		"malformed token": {"Bearer wrong key"},
		"key prefix":      {"Bearer " + testKey[:5]},
	}
	for name, auth := range credentials {
		t.Run(name, func(t *testing.T) {
			env := faultsNewEnv(t)
			before := snapshot(t, env.store)

			var first *httptest.ResponseRecorder
			for _, q := range securityRequests {
				r := httptest.NewRequest(q.method, q.target, strings.NewReader(q.body))
				if q.contentType != "" {
					r.Header.Set("Content-Type", q.contentType)
				}
				r.Header["Authorization"] = auth
				w := serve(env.h, r)
				if first == nil {
					first = w
					checkResponse(t, w)
					if w.Code != http.StatusUnauthorized {
						t.Fatalf("%s %s: status %d, want 401", q.method, q.target, w.Code)
					}
					continue
				}
				if diff := cmp.Diff(first.Header(), w.Header()); diff != "" {
					t.Errorf("%s %s: headers differ from %s's (-first +got):\n%s", q.method, q.target, securityRequests[0].target, diff)
				}
				want := first.Body.String()
				if q.method == http.MethodHead {
					want = ""
				}
				if w.Code != first.Code || w.Body.String() != want {
					t.Errorf("%s %s: %d %s, want %d %s", q.method, q.target, w.Code, w.Body, first.Code, want)
				}
			}
			if got := env.fs.TotalCalls(); got != 0 {
				t.Errorf("unauthenticated requests called the store %d times", got)
			}
			checkUnchanged(t, env.store, before)
		})
	}
}

// teamToken is the Credential of a host whose callers send X-Team-Token.
var teamToken = petstore.Credential{
	From:      func(r *http.Request) string { return r.Header.Get("X-Team-Token") },
	Challenge: `TeamToken realm="petstore"`,
	Missing:   "a team token is required; send it in the header X-Team-Token",
	Rejected:  "the team token is not valid; send a valid one in the header X-Team-Token",
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
