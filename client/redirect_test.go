package client_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/client"
)

// keyLog is a test server that records the Authorization header of every
// request it receives.
type keyLog struct {
	*httptest.Server
	mu   sync.Mutex
	keys []string
}

// newKeyLog starts a keyLog, with TLS when tls is set, that answers 404,
// or redirects every request to the same path under to when to is set
// (307, so that a POST stays a POST).
func newKeyLog(t *testing.T, tls bool, to string) *keyLog {
	k := &keyLog{}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		k.mu.Lock()
		k.keys = append(k.keys, r.Header.Get("Authorization"))
		k.mu.Unlock()
		if to == "" {
			http.NotFound(w, r)
			return
		}
		http.Redirect(w, r, to+r.URL.RequestURI(), http.StatusTemporaryRedirect)
	})
	if tls {
		k.Server = httptest.NewTLSServer(h)
	} else {
		k.Server = httptest.NewServer(h)
	}
	t.Cleanup(k.Close)
	return k
}

// received returns the Authorization headers received so far.
func (k *keyLog) received() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]string(nil), k.keys...)
}

// TestRedirectRefused checks that the client follows no redirect to another
// origin than the base URL's, so that the API key never arrives there: not
// at another port of the same host, not from https to http (net/http alone
// drops Authorization only on a redirect to another host), neither with
// the default http.Client nor with a caller's, which it leaves unchanged.
func TestRedirectRefused(t *testing.T) {
	plain := newKeyLog(t, false, "")
	secure := newKeyLog(t, true, "")
	tlsClient := secure.Client() // trusts the certificate of every httptest TLS server

	own := 0 // calls of the caller's CheckRedirect
	setups := []struct {
		name    string
		baseTLS bool
		target  *keyLog
		hc      *http.Client // nil: the default
		wantWhy string
	}{
		{"https to http on another port", true, plain, tlsClient, "never follows https to http"},
		{"https to another port", true, secure, tlsClient, "to that origin only"},
		{"http to another port, default client", false, plain, nil, "to that origin only"},
		{"http to another port, a caller's client that follows every redirect", false, plain,
			&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { own++; return nil }}, "to that origin only"},
	}
	ops := []struct {
		name string
		call func(c *client.Client) error
	}{
		{"Get", func(c *client.Client) error { _, err := c.Get(t.Context(), 1); return err }},
		{"Add", func(c *client.Client) error {
			_, _, err := c.Add(t.Context(), petstore.NewPet{Name: "Rex", CategoryID: 1}, petstore.AddOptions{})
			return err
		}},
		{"List", func(c *client.Client) error { _, err := c.List(t.Context(), petstore.ListOptions{}); return err }},
	}
	for _, s := range setups {
		for _, op := range ops {
			t.Run(s.name+"/"+op.name, func(t *testing.T) {
				base := newKeyLog(t, s.baseTLS, s.target.URL)
				before := len(s.target.received())
				opts := []client.Option{client.WithAPIKey("key-secret"), client.WithRetries(2)}
				if s.hc != nil {
					opts = append(opts, client.WithHTTPClient(s.hc))
				}
				c, err := client.New(base.URL+"/v1", opts...)
				must(t, err)
				err = op.call(c)
				t.Logf("error: %v", err)
				if !errors.Is(err, client.ErrRedirectRefused) {
					t.Errorf("errors.Is(err, ErrRedirectRefused) = false")
				}
				if errors.Is(err, petstore.ErrUnavailable) {
					t.Errorf("errors.Is(err, petstore.ErrUnavailable) = true; a refused redirect is no outage")
				}
				if err == nil || !strings.Contains(err.Error(), "redirects to "+s.target.URL+",") || !strings.Contains(err.Error(), s.wantWhy) {
					t.Errorf("the error does not name the origin %s and say %q", s.target.URL, s.wantWhy)
				}
				if got := s.target.received()[before:]; len(got) != 0 {
					t.Errorf("the redirect target received %d requests, with the keys %q; want none", len(got), got)
				}
				if diff := cmp.Diff([]string{"Bearer key-secret"}, base.received()); diff != "" {
					t.Errorf("the keys that reached the base URL, sent once and not retried (-want +got):\n%s", diff)
				}
				if s.hc == tlsClient && s.hc.CheckRedirect != nil {
					t.Errorf("the caller's http.Client has a CheckRedirect now; the client changed it")
				}
			})
		}
	}
	if own != 0 {
		t.Errorf("the caller's CheckRedirect was asked %d times about a redirect that the client refuses first", own)
	}
}

// TestOrigin checks how the client compares origins.
func TestOrigin(t *testing.T) {
	tests := []struct{ url, want string }{
		{"https://Pets.Example.com/v1", "https://pets.example.com:443"},
		{"https://pets.example.com:443/v1", "https://pets.example.com:443"},
		{"http://pets.example.com/v1", "http://pets.example.com:80"},
		{"http://127.0.0.1:8080", "http://127.0.0.1:8080"},
		{"http://[::1]:8080/v1", "http://[::1]:8080"},
		{"HTTPS://[::1]/v1", "https://[::1]:443"},
	}
	for _, tt := range tests {
		u, err := url.Parse(tt.url)
		must(t, err)
		if got := client.Origin(u); got != tt.want {
			t.Errorf("origin(%s) = %q; want %q", tt.url, got, tt.want)
		}
	}
}
