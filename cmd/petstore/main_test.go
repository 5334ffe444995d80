package main

import (
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/petstore-go/petstore/petstoretest"
)

// TestServerConformance runs the HTTP conformance suite against the server
// running as a process on its default, in-memory store.
func TestServerConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping a test that builds and runs the server as a process in -short mode")
	}
	const key = "conformance-key"
	p := startServer(t, buildServer(t), key, nil)
	petstoretest.TestServer(t, petstoretest.Endpoint{BaseURL: p.baseURL, APIKey: key})
	if log := p.stderr.String(); !strings.Contains(log, "storing pets in memory") {
		t.Errorf("the log does not say that pets are kept in memory:\n%s", log)
	}
}

// TestServerMakesAKey starts the server without keys: it prints one random
// key, once, and accepts it.
func TestServerMakesAKey(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping a test that builds and runs the server as a process in -short mode")
	}
	p := startServer(t, buildServer(t), "", nil)
	lines := regexp.MustCompile(`this run accepts the API key (\S+)\n`).FindAllStringSubmatch(p.stdout.String(), -1)
	if len(lines) != 1 || len(lines[0][1]) < 40 {
		t.Fatalf("stdout %q: want one line giving a key of at least 40 characters", p.stdout)
	}
	key := lines[0][1]
	for _, tt := range []struct {
		key  string
		want int
	}{{key, 200}, {"", 401}, {key[:len(key)-1], 401}} {
		r, _ := http.NewRequest("GET", p.baseURL+"/pets", nil)
		if tt.key != "" {
			r.Header.Set("Authorization", "Bearer "+tt.key)
		}
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.want {
			t.Errorf("with key %q: %d, want %d", tt.key, resp.StatusCode, tt.want)
		}
	}
	if strings.Contains(p.stderr.String(), key) {
		t.Errorf("the generated key is in the log:\n%s", p.stderr)
	}
}

func TestParseConfig(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		keys     string
		wantAddr string
		wantBase string
		wantKeys []string
		wantErr  bool
	}{
		{name: "defaults", wantAddr: "localhost:8080", wantBase: "/v1"},
		{name: "flags", args: []string{"-addr", ":9000", "-base-path", "/api/v2"}, wantAddr: ":9000", wantBase: "/api/v2"},
		{name: "keys trimmed, empty ones dropped", keys: " old , ,new,", wantAddr: "localhost:8080", wantBase: "/v1", wantKeys: []string{"old", "new"}},
		{name: "unknown flag", args: []string{"-port", "1"}, wantErr: true},
		{name: "stray argument", args: []string{"serve"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			getenv := func(k string) string {
				if k == "PETSTORE_API_KEYS" {
					return tt.keys
				}
				return ""
			}
			c, err := parseConfig(tt.args, getenv, io.Discard)
			if (err != nil) != tt.wantErr {
				t.Fatalf("parseConfig(%q) error = %v, want error %v", tt.args, err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if c.addr != tt.wantAddr || c.basePath != tt.wantBase || !slices.Equal(c.keys, tt.wantKeys) {
				t.Errorf("parseConfig(%q) = addr %q, base %q, keys %q; want %q, %q, %q",
					tt.args, c.addr, c.basePath, c.keys, tt.wantAddr, tt.wantBase, tt.wantKeys)
			}
		})
	}
}
