package jsontext

import "unicode/utf8"

const hex = "0123456789abcdef"

// AppendString appends s to dst as a JSON string that encoding/json decodes
// to the same value, escaping what encoding/json escapes: quotes,
// backslashes and control characters (\n, \r and \t by name, the others,
// \b and \f included, as \u00XX); <, > and & as \u003c, \u003e and \u0026 so
// the output is safe inside HTML; U+2028 and U+2029; and every invalid UTF-8
// byte as \ufffd.
func AppendString(dst []byte, s string) []byte {
	if plain(s) {
		dst = append(dst, '"')
		dst = append(dst, s...)
		return append(dst, '"')
	}
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		// Most names are plain ASCII: pass over them 8 bytes at a time.
		if i+8 <= len(s) && plain8(load8(s, i)) {
			i += 8
			continue
		}
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

// plain reports whether every byte of s is safe, so that s needs no
// escaping: 8 bytes at a time, the last 8 overlapping the ones before when
// the length is not a multiple of 8.
func plain(s string) bool {
	if len(s) < 8 {
		for i := 0; i < len(s); i++ {
			if b := s[i]; b >= utf8.RuneSelf || !safe(b) {
				return false
			}
		}
		return true
	}
	for i := 0; i+8 <= len(s); i += 8 {
		if !plain8(load8(s, i)) {
			return false
		}
	}
	return len(s)%8 == 0 || plain8(load8(s, len(s)-8))
}

// load8 returns the 8 bytes of s from i on as a little-endian word; the
// compiler turns it into one load.
func load8(s string, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// plain8 reports whether each of the 8 bytes in x is safe: ASCII that stands
// for itself in a JSON string. It uses the bit tricks for finding a zero or
// small byte in a word: (v - 0x01...) & ^v & 0x80... is non-zero exactly
// when some byte of v is zero (or, with n*0x01... subtracted, below n, for
// words without bytes from 0x80), so the whole word is tested at once. Two
// pairs of characters differ in one bit, which the tests set first: " (0x22)
// and & (0x26) both become 0x26 with bit 0x04 set, < (0x3c) and > (0x3e)
// both become 0x3e with bit 0x02 set, and no other byte becomes either.
func plain8(x uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	m := x & highs                            // non-ASCII
	m |= (x - 0x20*ones) & ^x & highs         // control characters
	m |= zeroByte((x | 0x04*ones) ^ '&'*ones) // " and &
	m |= zeroByte((x | 0x02*ones) ^ '>'*ones) // < and >
	m |= zeroByte(x ^ '\\'*ones)              // backslashes
	return m == 0
}

// zeroByte is non-zero when some byte of v is zero.
func zeroByte(v uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	return (v - ones) & ^v & highs
}

// safe reports whether the ASCII byte b stands for itself in a JSON string.
func safe(b byte) bool {
	return b >= 0x20 && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&'
}
