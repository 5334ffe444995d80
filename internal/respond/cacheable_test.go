package respond_test

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/petstore-go/petstore/internal/respond"
)

func TestNoneMatch(t *testing.T) {
	tag := respond.NewTag([]byte(`{"id":1}`), 0)
	s := string(tag[:])
	other := respond.NewTag([]byte(`{"id":2}`), 0)
	for _, c := range []struct {
		name   string
		values []string
		want   bool
	}{
		{"absent", nil, false},
		{"empty", []string{""}, false},
		{"the tag", []string{s}, true},
		{"weak form of the tag", []string{"W/" + s}, true},
		{"star", []string{"*"}, true},
		{"another tag", []string{string(other[:])}, false},
		{"in a list", []string{string(other[:]) + ", " + s}, true},
		{"in a list without spaces", []string{string(other[:]) + "," + s}, true},
		{"in a second header line", []string{string(other[:]), s}, true},
		{"unquoted", []string{s[1 : len(s)-1]}, false},
		{"unterminated", []string{s[:len(s)-1]}, false},
		{"after a malformed entry", []string{"junk, " + s}, false},
		{"prefix of the tag", []string{s[:len(s)-2] + `"`}, false},
		{"tag with more", []string{s[:len(s)-1] + `0"`}, false},
	} {
		if got := respond.NoneMatch(c.values, tag); got != c.want {
			t.Errorf("%s: NoneMatch(%q) = %v, want %v", c.name, c.values, got, c.want)
		}
	}
}

func TestNewTag(t *testing.T) {
	a := respond.NewTag([]byte(`[{"id":1}]`), 0)
	if !regexp.MustCompile(`^"[0-9a-f]{16}"$`).Match(a[:]) {
		t.Errorf("tag %s is not 16 hexadecimal digits in quotes", a[:])
	}
	if b := respond.NewTag([]byte(`[{"id":1}]`), 0); b != a {
		t.Errorf("the same body and variant give %s and %s", a[:], b[:])
	}
	if b := respond.NewTag([]byte(`[{"id":2}]`), 0); b == a {
		t.Errorf("two bodies share the tag %s", a[:])
	}
	if b := respond.NewTag([]byte(`[{"id":1}]`), 1); b == a {
		t.Errorf("two variants share the tag %s", a[:])
	}
}

func TestCacheable(t *testing.T) {
	body := []byte(`{"id":1,"name":"a","categoryId":1}`)
	tag := respond.NewTag(body, 0)
	cache := []string{"private, max-age=60"}
	full := http.Header{
		"Etag":                   {string(tag[:])},
		"Cache-Control":          cache,
		"Vary":                   {"Authorization"},
		"X-Content-Type-Options": {"nosniff"},
		"Content-Type":           {"application/json"},
		"Content-Length":         {strconv.Itoa(len(body))},
	}
	notModified := full.Clone()
	notModified.Del("Content-Type")
	notModified.Del("Content-Length")
	for _, c := range []struct {
		name        string
		method      string
		ifNoneMatch string
		status      int
		header      http.Header
		body        string
	}{
		{"GET", http.MethodGet, "", 200, full, string(body)},
		{"HEAD", http.MethodHead, "", 200, full, ""},
		{"GET with another tag", http.MethodGet, `"0000000000000000"`, 200, full, string(body)},
		{"GET with the tag", http.MethodGet, string(tag[:]), 304, notModified, ""},
		{"HEAD with the tag", http.MethodHead, string(tag[:]), 304, notModified, ""},
	} {
		r := httptest.NewRequest(c.method, "/v1/pets/1", nil)
		if c.ifNoneMatch != "" {
			r.Header.Set("If-None-Match", c.ifNoneMatch)
		}
		w := httptest.NewRecorder()
		respond.Cacheable(w, r, body, tag, cache)
		if w.Code != c.status || w.Body.String() != c.body {
			t.Errorf("%s: %d %q, want %d %q", c.name, w.Code, w.Body, c.status, c.body)
		}
		if diff := cmp.Diff(c.header, w.Header()); diff != "" {
			t.Errorf("%s: headers (-want +got):\n%s", c.name, diff)
		}
	}
}
