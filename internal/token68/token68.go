// Package token68 checks the token68 syntax of RFC 9110, section 11.2,
// which a bearer token (RFC 6750) follows.
package token68

// Valid reports whether s is 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" /
// "+" / "/" ) *"=".
func Valid(s string) bool {
	i := 0
	for ; i < len(s) && token68Char(s[i]); i++ {
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

// token68Char reports whether c is one of ALPHA, DIGIT, "-", ".", "_", "~",
// "+" and "/".
func token68Char(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return c == '-' || c == '.' || c == '_' || c == '~' || c == '+' || c == '/'
}
