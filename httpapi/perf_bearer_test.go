package httpapi_test

import (
	"errors"
	"net/http/httptest"
	"testing"

	"github.com/petstore-go/petstore/httpapi"
)

// TestPerfBearerTokenEveryByte checks the character test of BearerToken,
// which works on bit sets, against the token68 grammar of RFC 6750 for every
// byte value, in the middle of a token.
func TestPerfBearerTokenEveryByte(t *testing.T) {
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
