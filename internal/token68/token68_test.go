package token68_test

import (
	"testing"

	"github.com/petstore-go/petstore/internal/token68"
)

func TestValid(t *testing.T) {
	for s, want := range map[string]bool{
		"abcXYZ019":  true,
		"-._~+/":     true,
		"a=":         true,
		"a==":        true,
		"":           false,
		"=":          false,
		"a=b":        false,
		"a b":        false,
		"pa$$word!":  false,
		"clé":        false,
		"a\x00":      false,
		"Bearer x,y": false,
	} {
		if got := token68.Valid(s); got != want {
			t.Errorf("Valid(%q) = %v, want %v", s, got, want)
		}
	}
}
