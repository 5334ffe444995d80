package jsontext

import (
	"strconv"
	"unicode/utf8"
)

const hex = "0123456789abcdef"

// AppendString appends s to dst as a JSON string that encoding/json decodes
// to the same value, escaping what encoding/json escapes: quotes,
// backslashes and control characters (\n, \r and \t by name, the others,
// \b and \f included, as \u00XX); <, > and & as \u003c, \u003e and \u0026 so
// the output is safe inside HTML; U+2028 and U+2029; and every invalid UTF-8
// byte as \ufffd.
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if safe(b) {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '"', '\\':
				dst = append(dst, '\\', b)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// safe reports whether the ASCII byte b stands for itself in a JSON string.
func safe(b byte) bool {
	return b >= 0x20 && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&'
}

// AppendInt appends the decimal form of n to dst, a JSON number, as
// strconv.AppendInt(dst, n, 10) does, faster for the non-negative numbers
// that IDs are.
func AppendInt(dst []byte, n int64) []byte {
	if n < 0 {
		return strconv.AppendInt(dst, n, 10)
	}
	if n < 10 {
		return append(dst, byte('0'+n))
	}
	// Two digits at a time, from the last, into a buffer on the stack.
	var buf [20]byte
	i := len(buf)
	u := uint64(n)
	for u >= 100 {
		q := u / 100
		r := 2 * (u - q*100)
		i -= 2
		buf[i], buf[i+1] = digitPairs[r], digitPairs[r+1]
		u = q
	}
	if u >= 10 {
		i -= 2
		buf[i], buf[i+1] = digitPairs[2*u], digitPairs[2*u+1]
	} else {
		i--
		buf[i] = byte('0' + u)
	}
	return append(dst, buf[i:]...)
}

// digitPairs holds the two digits of 00 to 99, one pair after another.
const digitPairs = "00010203040506070809" + "10111213141516171819" + "20212223242526272829" +
	"30313233343536373839" + "40414243444546474849" + "50515253545556575859" +
	"60616263646566676869" + "70717273747576777879" + "80818283848586878889" + "90919293949596979899"
