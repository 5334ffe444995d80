package petstore_test

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/memstore"
)

func TestNewReportsConfigurationMistakes(t *testing.T) {
	defaultDeprecation, defaultSunset := defaultDates()
	store := petstore.WithStore(memstore.New())
	auth := petstore.WithAuthenticator(petstore.APIKeys("k"))
	tests := []struct {
		name string
		opts []petstore.Option
		want string // a part of the error that names the fix
	}{
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
		{"nil logger", []petstore.Option{store, auth, petstore.WithLogger(nil)}, "WithLogger"},
		{"sunset before deprecation", []petstore.Option{store, auth, petstore.WithDeprecation(defaultSunset, defaultDeprecation)}, "WithDeprecation"},
		{"zero date", []petstore.Option{store, auth, petstore.WithDeprecation(time.Time{}, defaultSunset)}, "WithDeprecation"},
		{"zero retry", []petstore.Option{store, auth, petstore.WithRetryAfter(0)}, "WithRetryAfter"},
		{"nil option", []petstore.Option{store, auth, nil}, "nil"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := petstore.New(tt.opts...)
			if err == nil || h != nil {
				t.Fatalf("New = %v, %v; want an error", h, err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not contain %q", err, tt.want)
			}
		})
	}
}

func TestNewAcceptsValidOptions(t *testing.T) {
	for _, path := range []string{"", "/v1", "/api/animals/v1"} {
		_, err := petstore.New(petstore.WithStore(memstore.New()), petstore.WithAuthenticator(petstore.APIKeys("k")),
			petstore.WithBasePath(path), petstore.WithLogger(slog.Default()), petstore.WithMaxBodyBytes(1),
			petstore.WithRetryAfter(1500*time.Millisecond))
		if err != nil {
			t.Errorf("base path %q: %v", path, err)
		}
	}
}

func TestWithMaxBodyBytes(t *testing.T) {
	env := newEnv(t, petstore.WithMaxBodyBytes(30))
	body := `{"name":"Rex","categoryId":1}` // 29 bytes
	if w := env.serve(newRequest(t, "POST", "/v1/pets", body, nil)); w.Code != 201 {
		t.Errorf("29-byte body: %d, want 201", w.Code)
	}
	if w := env.serve(newRequest(t, "POST", "/v1/pets", body+"  ", nil)); w.Code != 413 {
		t.Errorf("31-byte body: %d, want 413", w.Code)
	}
}
