package httpapi

import "testing"

// BenchmarkIsToken68 checks a 20-byte API key and a 43-byte random token
// with isToken68, whose character test is two 64-bit sets (impl=bitset),
// and with the same grammar as comparisons in a switch (impl=switch).
//
//	go test -run '^$' -bench IsToken68 -count 6 ./httpapi
func BenchmarkIsToken68(b *testing.B) {
	tokens := []struct{ name, s string }{
		{"key", "bench-key-0123456789"},
		{"random", "q3Rk_7vNw-Zt0pLx9mB2sYcA4eHfJ6uKdG8iWoTnV1E"},
	}
	impls := []struct {
		name string
		fn   func(string) bool
	}{
		{"bitset", isToken68},
		{"switch", isToken68Switch},
	}
	for _, tok := range tokens {
		for _, impl := range impls {
			b.Run("token="+tok.name+"/impl="+impl.name, func(b *testing.B) {
				for b.Loop() {
					if !impl.fn(tok.s) {
						b.Fatal("not token68")
					}
				}
			})
		}
	}
}

// isToken68Switch is isToken68 with the character test written as
// comparisons.
func isToken68Switch(s string) bool {
	i := 0
	for ; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
			continue
		case c == '-', c == '.', c == '_', c == '~', c == '+', c == '/':
			continue
		}
		break
	}
	if i == 0 {
		return false
	}
	for ; i < len(s); i++ {
		if s[i] != '=' {
			return false
		}
	}
	return true
}
