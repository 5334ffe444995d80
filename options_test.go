package petstore_test

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/docspage"
	"github.com/petstore-go/petstore/memstore"
)

// TestNewReportsConfigurationMistakes checks New's errors, each naming the
// fix, and that CheckOptions returns word for word the error of New with a
// store and an authenticator, so that a host can check its configuration
// before it opens its store.
func TestNewReportsConfigurationMistakes(t *testing.T) {
	if err := petstore.CheckOptions(); err != nil {
		t.Errorf("CheckOptions() = %v; a missing store and authenticator are no mistake to it", err)
	}
	defaultDeprecation, defaultSunset := defaultDates()
	store := petstore.WithStore(memstore.New())
	auth := petstore.WithAuthenticator(petstore.APIKeys("k"))
	named := func(keys ...petstore.APIKey) []petstore.Option {
		return []petstore.Option{store, petstore.WithAuthenticator(petstore.NamedAPIKeys(keys...))}
	}
	tests := []struct {
		name string
		opts []petstore.Option
		want string // a part of the error that names the fix, or "" for none
	}{
		{"valid", []petstore.Option{store, auth, petstore.WithBasePath("/api/animals/v1"), petstore.WithLogger(slog.Default()), petstore.WithMaxBodyBytes(1),
			petstore.WithRetryAfter(1500 * time.Millisecond), petstore.WithStoreTimeout(time.Second), petstore.WithDocs(docspage.Files())}, ""},
		{"empty base path", []petstore.Option{store, auth, petstore.WithBasePath("")}, ""},
		{"valid keys", []petstore.Option{store, petstore.WithAuthenticator(petstore.APIKeys("k1", "k2"))}, ""},
		{"empty keys beside a real one", []petstore.Option{store, petstore.WithAuthenticator(petstore.APIKeys("", "k", ""))}, ""},
		{"docs without the document", []petstore.Option{store, auth, petstore.WithDocs(docspage.Files()), petstore.WithOpenAPI(false)}, "drop WithOpenAPI(false)"},
		{"docs without index.html", []petstore.Option{store, auth, petstore.WithDocs(fstest.MapFS{"page.html": {}})}, "WithDocs: the page has no index.html"},
		{"docs of no files", []petstore.Option{store, auth, petstore.WithDocs(fstest.MapFS{})}, "WithDocs: the page has no index.html"},
		{"docs with a .txt", []petstore.Option{store, auth, petstore.WithDocs(fstest.MapFS{"index.html": {}, "notes.txt": {}})}, "WithDocs: notes.txt has no known Content-Type"},
		{"docs with a file without extension", []petstore.Option{store, auth, petstore.WithDocs(fstest.MapFS{"index.html": {}, "LICENSE": {}})}, "WithDocs: LICENSE has no known Content-Type"},
		{"two mistakes", []petstore.Option{store, auth, petstore.WithBasePath("v1"), petstore.WithMaxBodyBytes(-1)}, "WithMaxBodyBytes"},
		{"no store", []petstore.Option{auth}, "WithStore"},
		{"no authenticator", []petstore.Option{store}, "WithAuthenticator"},
		{"nothing", nil, "WithStore"},
		{"nil store", []petstore.Option{petstore.WithStore(nil), auth}, "WithStore: the store is nil"},
		{"nil authenticator", []petstore.Option{store, petstore.WithAuthenticator(nil)}, "WithAuthenticator: the authenticator is nil"},
		{"base path without slash", []petstore.Option{store, auth, petstore.WithBasePath("v1")}, `WithBasePath: "v1" does not begin with a slash; use "/v1"`},
		{"base path with trailing slash", []petstore.Option{store, auth, petstore.WithBasePath("/v1/")}, `use "/v1"`},
		{"base path with query", []petstore.Option{store, auth, petstore.WithBasePath("/v1?x")}, "WithBasePath"},
		{"zero body limit", []petstore.Option{store, auth, petstore.WithMaxBodyBytes(0)}, "WithMaxBodyBytes: 0 is not positive"},
		{"negative body limit", []petstore.Option{store, auth, petstore.WithMaxBodyBytes(-1)}, "WithMaxBodyBytes"},
		{"zero body timeout", []petstore.Option{store, auth, petstore.WithBodyTimeout(0)}, "WithBodyTimeout: 0s is not positive"},
		{"nil logger", []petstore.Option{store, auth, petstore.WithLogger(nil)}, "WithLogger"},
		{"sunset before deprecation", []petstore.Option{store, auth, petstore.WithDeprecation(defaultSunset, defaultDeprecation)}, "WithDeprecation"},
		{"zero date", []petstore.Option{store, auth, petstore.WithDeprecation(time.Time{}, defaultSunset)}, "WithDeprecation"},
		{"zero retry", []petstore.Option{store, auth, petstore.WithRetryAfter(0)}, "WithRetryAfter"},
		{"nil option", []petstore.Option{store, auth, nil}, "nil"},
		{"credential of no fields", []petstore.Option{store, auth, petstore.WithCredential(petstore.Credential{}), petstore.WithOpenAPI(false)},
			"WithCredential: set From (the function that reads a request's credential), Challenge"},
		{"credential without messages", []petstore.Option{store, auth, petstore.WithCredential(petstore.Credential{From: teamToken.From, Challenge: "X"}), petstore.WithOpenAPI(false)},
			"WithCredential: set Missing (the message of a 401 without a credential), Rejected"},
		{"challenge with a newline", []petstore.Option{store, auth, petstore.WithOpenAPI(false),
			petstore.WithCredential(petstore.Credential{From: teamToken.From, Challenge: "X\r\nSet-Cookie: a=b", Missing: "m", Rejected: "r"})}, "cannot be a header value"},
		{"credential with the served document", []petstore.Option{store, auth, petstore.WithCredential(teamToken)},
			"WithCredential: the served OpenAPI document and docs page describe the bearer token, which this credential replaces; add WithOpenAPI(false)"},
		{"credential without the document", []petstore.Option{store, auth, petstore.WithCredential(teamToken), petstore.WithOpenAPI(false)}, ""},
		{"NamedAPIKeys without a key", named(petstore.APIKey{Principal: "alice"}), "NamedAPIKeys: no key is set"},
		{"NamedAPIKeys with a bad key", named(petstore.APIKey{Principal: "alice", Key: "a b"}), "NamedAPIKeys: key 1 of 1 has characters that no bearer token can carry"},
		{"space in a principal", named(petstore.APIKey{Principal: "alice smith", Key: "k"}), `NamedAPIKeys: the principal of key 1 of 1 "alice smith" has a character`},
		{"colon in a principal", named(petstore.APIKey{Principal: "a:b", Key: "k"}), `NamedAPIKeys: the principal of key 1 of 1 "a:b" has a character`},
		{"long principal", named(petstore.APIKey{Principal: strings.Repeat("a", 65), Key: "k"}), "NamedAPIKeys: the principal of key 1 of 1 is 65 bytes long; use at most 64"},
		{"fingerprint prefix", named(petstore.APIKey{Principal: "key-0123", Key: "k"}), "begins as a key's fingerprint does"},
		{"token prefix", named(petstore.APIKey{Principal: "token-0123", Key: "k"}), "begins as a key's fingerprint does"},
		{"one key, two principals", named(petstore.APIKey{Principal: "alice", Key: "k"}, petstore.APIKey{Principal: "bob", Key: "k"}),
			`NamedAPIKeys: key 2 of 2 is an earlier key again with another principal ("bob", not "alice")`},
		{"one key twice to one principal", named(petstore.APIKey{Principal: "alice", Key: "k"}, petstore.APIKey{Principal: "alice", Key: "k"}), ""},
		{"negative MaxInFlight", []petstore.Option{store, auth, petstore.WithRateLimit(petstore.RateLimit{MaxInFlight: -1})}, "MaxInFlight -1"},
		{"negative Pause", []petstore.Option{store, auth, petstore.WithRateLimit(petstore.RateLimit{Pause: -time.Second})}, "Pause -1s is negative"},
		{"zero store timeout", []petstore.Option{store, auth, petstore.WithStoreTimeout(0)}, "WithStoreTimeout: 0s is not positive"},
		{"base path not escaped", []petstore.Option{store, auth, petstore.WithBasePath("/München")}, `use "/M%C3%BCnchen"`},
		{"base path with a space", []petstore.Option{store, auth, petstore.WithBasePath("/my pets")}, `use "/my%20pets"`},
		{"APIKeys without keys", []petstore.Option{store, petstore.WithAuthenticator(petstore.APIKeys())}, "APIKeys: no key is set"},
		{"APIKeys with empty keys", []petstore.Option{store, petstore.WithAuthenticator(petstore.APIKeys("", ""))}, "APIKeys: no key is set"},
		{"APIKeys with one empty key", []petstore.Option{store, petstore.WithAuthenticator(petstore.APIKeys(""))}, "APIKeys: no key is set"},
		{"key with $ and !", []petstore.Option{store, petstore.WithAuthenticator(petstore.APIKeys("ok", "pa$$word!"))}, "key 2 of 2 has characters that no bearer token can carry; use only letters, digits, -, ., _, ~, + and /"},
		{"key with a space", []petstore.Option{store, petstore.WithAuthenticator(petstore.APIKeys("a key"))}, "key 1 of 1 has characters"},
		{"key with é", []petstore.Option{store, petstore.WithAuthenticator(petstore.APIKeys("clé"))}, "key 1 of 1 has characters"},
		{"key with = inside", []petstore.Option{store, petstore.WithAuthenticator(petstore.APIKeys("a=b"))}, "key 1 of 1 has characters"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := petstore.New(tt.opts...)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("New: %v", err)
			case tt.want != "" && (err == nil || h != nil):
				t.Fatalf("New = %v, %v; want an error", h, err)
			case tt.want != "" && !strings.Contains(err.Error(), tt.want):
				t.Errorf("error %q does not contain %q", err, tt.want)
			}
			full := append(tt.opts[:len(tt.opts):len(tt.opts)], store, auth)
			_, newErr := petstore.New(full...)
			if checkErr := petstore.CheckOptions(full...); fmt.Sprint(checkErr) != fmt.Sprint(newErr) {
				t.Errorf("CheckOptions: %v\nNew: %v\nwant the same error", checkErr, newErr)
			}
		})
	}
}
