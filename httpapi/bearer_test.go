package httpapi_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/petstore-go/petstore/httpapi"
)

func TestBearerToken(t *testing.T) {
	long := strings.Repeat("a", 1<<16)
	tests := []struct {
		name    string
		values  []string // the Authorization header's values
		want    string
		wantErr error
	}{
		{"token", []string{"Bearer abc"}, "abc", nil},
		{"scheme in lower case", []string{"bearer abc"}, "abc", nil},
		{"scheme in mixed case", []string{"bEaReR abc"}, "abc", nil},
		{"several spaces", []string{"Bearer    abc"}, "abc", nil},
		{"every token68 character", []string{"Bearer aZ09-._~+/=="}, "aZ09-._~+/==", nil},
		{"64 KiB token", []string{"Bearer " + long}, long, nil},
		{"no header", nil, "", httpapi.ErrNoCredentials},
		{"two headers", []string{"Bearer abc", "Bearer abc"}, "", httpapi.ErrNoCredentials},
		{"empty header", []string{""}, "", httpapi.ErrNoCredentials},
		{"scheme only", []string{"Bearer"}, "", httpapi.ErrNoCredentials},
		{"scheme and a space", []string{"Bearer "}, "", httpapi.ErrNoCredentials},
		{"scheme and spaces", []string{"Bearer    "}, "", httpapi.ErrNoCredentials},
		{"Basic", []string{"Basic YWxhZGRpbjpvcGVuc2VzYW1l"}, "", httpapi.ErrNoCredentials},
		{"scheme as a prefix", []string{"Bearerabc"}, "", httpapi.ErrNoCredentials},
		{"longer scheme", []string{"Bearers abc"}, "", httpapi.ErrNoCredentials},
		{"tab separator", []string{"Bearer\tabc"}, "", httpapi.ErrNoCredentials},
		{"leading space", []string{" Bearer abc"}, "", httpapi.ErrNoCredentials},
		{"scheme with non-ASCII letter", []string{"Bearer\u212a abc"}, "", httpapi.ErrNoCredentials},
		{"inner space", []string{"Bearer ab c"}, "", httpapi.ErrMalformedToken},
		{"trailing space", []string{"Bearer abc "}, "", httpapi.ErrMalformedToken},
		{"padding first", []string{"Bearer =abc"}, "", httpapi.ErrMalformedToken},
		{"padding inside", []string{"Bearer ab=c"}, "", httpapi.ErrMalformedToken},
		{"quoted", []string{`Bearer "abc"`}, "", httpapi.ErrMalformedToken},
		{"comma", []string{"Bearer abc, Bearer def"}, "", httpapi.ErrMalformedToken},
		{"NUL", []string{"Bearer abc\x00"}, "", httpapi.ErrMalformedToken},
		{"CR LF", []string{"Bearer abc\r\nX-Evil: 1"}, "", httpapi.ErrMalformedToken},
		{"non-ASCII", []string{"Bearer clé"}, "", httpapi.ErrMalformedToken},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			if tt.values != nil {
				r.Header["Authorization"] = tt.values
			}
			got, err := httpapi.BearerToken(r)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("token = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestBearerTokenEveryByte checks the character test of BearerToken against
// the token68 grammar of RFC 6750 for every byte value, in the middle of a
// token.
func TestBearerTokenEveryByte(t *testing.T) {
	for c := range 256 {
		b := byte(c)
		inToken68 := 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9' ||
			b == '-' || b == '.' || b == '_' || b == '~' || b == '+' || b == '/'
		r := httptest.NewRequest("GET", "/", nil)
		r.Header["Authorization"] = []string{"Bearer x" + string([]byte{b}) + "y"}
		token, err := httpapi.BearerToken(r)
		switch {
		case inToken68 && (err != nil || token != "x"+string([]byte{b})+"y"):
			t.Errorf("byte %#x: BearerToken = %q, %v; want the token", b, token, err)
		case !inToken68 && !errors.Is(err, httpapi.ErrMalformedToken):
			t.Errorf("byte %#x: BearerToken = %q, %v; want ErrMalformedToken", b, token, err)
		}
	}
}

func TestBearerTokenNamesTheScheme(t *testing.T) {
	tests := []struct {
		header, scheme string // scheme "-" for a plain ErrNoCredentials
	}{
		{"Basic dXNlcjpwYXNz", "Basic"},
		{"basic dXNlcjpwYXNz", "Basic"},
		{"Digest username=\"a\"", "Digest"},
		{"s3cr3t-key-sent-without-a-scheme", ""},
		{"Token s3cr3t", ""},
		{"Bearer", "-"},
		{"  ", "-"},
	}
	for _, tt := range tests {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Header.Set("Authorization", tt.header)
		_, err := httpapi.BearerToken(r)
		if !errors.Is(err, httpapi.ErrNoCredentials) {
			t.Errorf("%q: err = %v, want ErrNoCredentials", tt.header, err)
		}
		var se *httpapi.SchemeError
		switch {
		case tt.scheme == "-":
			if errors.As(err, &se) {
				t.Errorf("%q: err = %v, want no SchemeError", tt.header, err)
			}
		case !errors.As(err, &se):
			t.Errorf("%q: err = %v, want a SchemeError", tt.header, err)
		case se.Scheme != tt.scheme:
			t.Errorf("%q: Scheme %q, want %q", tt.header, se.Scheme, tt.scheme)
		case strings.Contains(err.Error(), "s3cr3t"):
			t.Errorf("%q: the error %q repeats the credential", tt.header, err)
		}
	}
}
