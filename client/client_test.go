package client_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/client"
)

// TestNew checks that New refuses a base URL or options it cannot work
// with, and says how to fix them.
func TestNew(t *testing.T) {
	tests := []struct {
		name string
		base string
		opts []client.Option
		want string // in the error
	}{
		{"empty", "", nil, "such as https://"},
		{"no scheme", "pets.example.com/v1", nil, "not an absolute http or https URL"},
		{"other scheme", "ftp://pets.example.com/v1", nil, "not an absolute http or https URL"},
		{"no host", "https:///v1", nil, "not an absolute http or https URL"},
		{"bad escape", "https://pets.example.com/%zz", nil, "does not parse"},
		{"password", "https://me:secret@pets.example.com/v1", nil, "WithAPIKey"},
		{"query", "https://pets.example.com/v1?x=1", nil, "query or fragment"},
		{"fragment", "https://pets.example.com/v1#pets", nil, "query or fragment"},
		{"nil option", "https://pets.example.com/v1", []client.Option{nil}, "remove it"},
		{"empty key", "https://pets.example.com/v1", []client.Option{client.WithAPIKey("")}, "WithAPIKey: the key is empty"},
		{"key with a line break", "https://pets.example.com/v1", []client.Option{client.WithAPIKey("abc\n")}, "no bearer token can carry"},
		{"nil key function", "https://pets.example.com/v1", []client.Option{client.WithAPIKeyFunc(nil)}, "use WithAPIKey"},
		{"nil HTTP client", "https://pets.example.com/v1", []client.Option{client.WithHTTPClient(nil)}, "http.DefaultClient"},
		{"negative retries", "https://pets.example.com/v1", []client.Option{client.WithRetries(-1)}, "use 0 to turn retries off"},
		{"zero backoff", "https://pets.example.com/v1", []client.Option{client.WithBackoff(0, 1)}, "must be positive"},
		{"backoff max under min", "https://pets.example.com/v1", []client.Option{client.WithBackoff(2, 1)}, "the second at least the first"},
		{"negative timeout", "https://pets.example.com/v1", []client.Option{client.WithTimeout(-time.Second)}, "use 0 for no timeout"},
		{"no key", "https://pets.example.com/v1", nil, "no API key: pass WithAPIKey(key), or WithAPIKeyFunc"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := client.New(tt.base, tt.opts...)
			if err == nil {
				t.Fatalf("New = %v, nil; want an error", c)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("New: %v; want an error that says %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "secret") {
				t.Errorf("New: %v shows the password", err)
			}
		})
	}
}

// TestBaseURL checks that the client finds the pets under the base URL,
// with or without a trailing slash, and under any base path; and through
// a redirect within the base URL's origin (from /old/v1 to /v1), which it
// follows with the key, still asking a caller's CheckRedirect.
func TestBaseURL(t *testing.T) {
	for _, path := range []string{"/v1", "/v1/", "/shop/M%C3%BCnchen/api", "", "/old/v1"} {
		t.Run(path, func(t *testing.T) {
			redirected := strings.HasPrefix(path, "/old/")
			srv, _ := newMemServer(t, petstore.WithBasePath(strings.TrimPrefix(strings.TrimSuffix(path, "/"), "/old")))
			if redirected {
				var mux http.ServeMux
				mux.Handle("/old/", http.StripPrefix("/old", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					http.Redirect(w, r, srv.URL+r.URL.Path, http.StatusTemporaryRedirect)
				})))
				mux.Handle("/", srv.Config.Handler)
				srv.Config.Handler = &mux
			}
			var asked []string
			c := newClient(t, srv.URL+path, client.WithHTTPClient(&http.Client{CheckRedirect: func(req *http.Request, _ []*http.Request) error {
				asked = append(asked, req.URL.Path)
				return nil
			}}))
			ctx := petstore.WithPrincipal(t.Context(), "alice")
			pet, _, err := c.Add(ctx, petstore.NewPet{Name: "Rex", CategoryID: 1}, petstore.AddOptions{})
			must(t, err)
			got, err := c.Get(ctx, pet.ID)
			must(t, err)
			if diff := cmp.Diff(pet, got); diff != "" {
				t.Errorf("Get (-Add returned +got):\n%s", diff)
			}
			var wantAsked []string
			if redirected {
				wantAsked = []string{"/v1/pets", "/v1/pets/1"}
			}
			if diff := cmp.Diff(wantAsked, asked); diff != "" {
				t.Errorf("the paths the caller's CheckRedirect was asked about (-want +got):\n%s", diff)
			}
			for _, r := range srv.requestsOf(http.MethodPost) {
				if got := r.Header.Get("Authorization"); got != "Bearer key-alice" {
					t.Errorf("a POST has Authorization %q; want the key", got)
				}
			}
		})
	}
}

// TestRequestHeaders checks the headers that the client sends.
func TestRequestHeaders(t *testing.T) {
	srv, _ := newMemServer(t)
	ctx := petstore.WithPrincipal(context.Background(), "alice")
	c := newClient(t, srv.base)
	p := petstore.NewPet{Name: "Rex", CategoryID: 1}
	for _, key := range []string{"my-key", "", ""} { // the caller's key, then two that Add makes
		_, _, err := c.Add(ctx, p, petstore.AddOptions{IdempotencyKey: key})
		must(t, err)
	}
	_, err := c.List(ctx, petstore.ListOptions{})
	must(t, err)
	posts, gets := srv.requestsOf(http.MethodPost), srv.requestsOf(http.MethodGet)
	want := map[string]string{
		"Accept":          "application/json",
		"Authorization":   "Bearer key-alice",
		"Content-Type":    "application/json",
		"Idempotency-Key": "my-key",
		"User-Agent":      "petstore-go-client",
	}
	header := func(r *http.Request) map[string]string { // the headers of want
		got := map[string]string{}
		for name := range want {
			got[name] = r.Header.Get(name)
		}
		return got
	}
	if diff := cmp.Diff(want, header(posts[0])); diff != "" {
		t.Errorf("POST with the caller's key (-want +got):\n%s", diff)
	}
	made := []string{posts[1].Header.Get("Idempotency-Key"), posts[2].Header.Get("Idempotency-Key")}
	if len(made[0]) < 20 || made[0] == made[1] {
		t.Errorf("the Idempotency-Keys that Add made are %q; want two different random ones", made)
	}
	want["Content-Type"], want["Idempotency-Key"] = "", ""
	if diff := cmp.Diff(want, header(gets[0])); diff != "" {
		t.Errorf("GET (-want +got):\n%s", diff)
	}

	// A key function that gives no key sends no Authorization.
	c, err = client.New(srv.base, client.WithAPIKeyFunc(func(context.Context) string { return "" }))
	must(t, err)
	c.List(ctx, petstore.ListOptions{})
	gets = srv.requestsOf(http.MethodGet)
	last := gets[len(gets)-1]
	if got := last.Header.Get("Authorization"); got != "" {
		t.Errorf("Authorization = %q; want none", got)
	}
}
