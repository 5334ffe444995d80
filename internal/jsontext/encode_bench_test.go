package jsontext

import (
	"testing"
	"unicode/utf8"
)

// The encoder benchmarks compare each of the encoder's hand-written parts
// with the plain form it replaces, in the same run:
//
//	go test -run '^$' -bench AppendString -benchmem -count 6 ./internal/jsontext > enc.txt
//	benchstat -col /impl enc.txt

// benchNames are names as pets have them: the benchmarks' own "pet 12345",
// a longer plain one, and one with a character to escape.
var benchNames = []struct{ name, s string }{
	{"short", "pet 12345"},
	{"long", "Fluffy the Third of Hollyhock Lane"},
	{"escaped", "Tom & Jerry"},
}

// BenchmarkAppendString appends each of benchNames 20 times, as a page of 20
// pets does, with AppendString (impl=word, which checks 8 bytes at a time)
// and with appendStringBytewise (impl=bytewise, the same escaping checked a
// byte at a time).
func BenchmarkAppendString(b *testing.B) {
	impls := []struct {
		name string
		fn   func([]byte, string) []byte
	}{
		{"word", AppendString},
		{"bytewise", appendStringBytewise},
	}
	for _, n := range benchNames {
		for _, impl := range impls {
			b.Run("name="+n.name+"/impl="+impl.name, func(b *testing.B) {
				buf := make([]byte, 0, 2048)
				for b.Loop() {
					buf = buf[:0]
					for range 20 {
						buf = impl.fn(buf, n.s)
					}
				}
			})
		}
	}
}

// appendStringBytewise is AppendString without the 8-byte checks: the
// plain loop over bytes that they speed up.
func appendStringBytewise(dst []byte, s string) []byte {
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
