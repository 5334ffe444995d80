package body_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/petstore-go/petstore/internal/body"
)

// bodyDribble returns the bytes of s one read at a time.
type bodyDribble struct{ s string }

func (d *bodyDribble) Read(p []byte) (int, error) {
	if d.s == "" {
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	p[0] = d.s[0]
	d.s = d.s[1:]
	return 1, nil
}

// bodyEndless is a body that never ends.
type bodyEndless struct{ read int }

func (e *bodyEndless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	e.read += len(p)
	return len(p), nil
}

func TestReadBody(t *testing.T) {
	const limit = 16
	tests := []struct {
		name          string
		body          io.Reader
		contentLength int64 // as declared; -1 for unknown
		wantErr       error
		want          string
	}{
		{"empty", strings.NewReader(""), 0, nil, ""},
		{"no body", http.NoBody, 0, nil, ""},
		{"under the limit", strings.NewReader("hello"), 5, nil, "hello"},
		{"at the limit", strings.NewReader(strings.Repeat("a", limit)), limit, nil, strings.Repeat("a", limit)},
		{"one over the limit", strings.NewReader(strings.Repeat("a", limit+1)), limit + 1, body.ErrTooLarge, ""},
		{"declared over the limit", strings.NewReader("short"), 1 << 40, body.ErrTooLarge, ""},
		{"unknown length at the limit", strings.NewReader(strings.Repeat("a", limit)), -1, nil, strings.Repeat("a", limit)},
		{"unknown length over the limit", strings.NewReader(strings.Repeat("a", limit+1)), -1, body.ErrTooLarge, ""},
		{"declared short, sent long", strings.NewReader(strings.Repeat("a", 1000)), 2, body.ErrTooLarge, ""},
		{"a byte per read", &bodyDribble{strings.Repeat("b", limit)}, -1, nil, strings.Repeat("b", limit)},
		{"a byte per read, over", &bodyDribble{strings.Repeat("b", limit+1)}, -1, body.ErrTooLarge, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "/", nil)
			r.Body = io.NopCloser(tt.body)
			if tt.body == http.NoBody {
				r.Body = http.NoBody
			}
			r.ContentLength = tt.contentLength
			got, err := body.Read(r, limit, make([]byte, 0, 4))
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if tt.wantErr == nil && string(got) != tt.want {
				t.Errorf("body = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestReadBodyStopsReading: a body that never ends is read no further than
// one byte past the limit.
func TestReadBodyStopsReading(t *testing.T) {
	const limit = 1 << 10
	e := &bodyEndless{}
	r := httptest.NewRequest(http.MethodPost, "/", nil)
	r.Body, r.ContentLength = io.NopCloser(e), -1
	if _, err := body.Read(r, limit, nil); !errors.Is(err, body.ErrTooLarge) {
		t.Fatalf("err = %v, want ErrTooLarge", err)
	}
	if e.read != limit+1 {
		t.Errorf("read %d bytes, want %d", e.read, limit+1)
	}
}

func TestReadBodyPassesReadErrors(t *testing.T) {
	boom := errors.New("connection reset")
	r := httptest.NewRequest(http.MethodPost, "/", nil)
	r.Body, r.ContentLength = io.NopCloser(io.MultiReader(strings.NewReader("ab"), bodyFailing{boom})), -1
	if _, err := body.Read(r, 100, nil); !errors.Is(err, boom) {
		t.Errorf("err = %v, want %v", err, boom)
	}
}

type bodyFailing struct{ err error }

func (f bodyFailing) Read([]byte) (int, error) { return 0, f.err }

func TestIsJSON(t *testing.T) {
	tests := map[string]bool{
		"application/json":                  true,
		"application/json; charset=utf-8":   true,
		"application/json;charset=UTF-8":    true,
		"APPLICATION/JSON":                  true,
		" application/json ":                true,
		"application/json ; q=1":            true,
		"":                                  false,
		"text/plain":                        false,
		"text/json":                         false,
		"application/jsonx":                 false,
		"application/json-patch+json":       false,
		"application/merge-patch+json":      false,
		"application/problem+json":          false,
		"application/x-www-form-urlencoded": false,
		"application/json\x00":              false,
		"application":                       false,
		"multipart/form-data; boundary=application/json": false,
	}
	for ct, want := range tests {
		if got := body.IsJSON(ct); got != want {
			t.Errorf("IsJSON(%q) = %v, want %v", ct, got, want)
		}
	}
}
