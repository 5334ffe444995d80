package wirejson_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/petstore-go/petstore/internal/wirejson"
)

// encodeStrings are strings that exercise every branch of AppendString,
// with the exact output expected, each special byte at the start, in the
// middle and at the end of a string.
var encodeStrings = []struct {
	name, in, want string
}{
	{"empty", "", `""`},
	{"plain", "Rex", `"Rex"`},
	{"plain word", "Fluffy the 3rd", `"Fluffy the 3rd"`},
	{"quote", `say "hi"`, `"say \"hi\""`},
	{"backslash", `C:\pets\rex`, `"C:\\pets\\rex"`},
	{"HTML", "<b>Tom & Jerry</b>", `"\u003cb\u003eTom \u0026 Jerry\u003c/b\u003e"`},
	{"slash stays", "a/b", `"a/b"`},
	{"newline tab return", "a\nb\tc\rd", `"a\nb\tc\rd"`},
	{"backspace and form feed", "x\by\fz", `"x\u0008y\u000cz"`},
	{"other controls", "\x00\x01\x1f", `"\u0000\u0001\u001f"`},
	{"DEL stays", "a\x7fb", "\"a\x7fb\""},
	{"line separators", "a\u2028b\u2029c", `"a\u2028b\u2029c"`},
	{"U+2027 stays", "a\u2027b", "\"a\u2027b\""},
	{"non-ASCII", "Мурка 🐈 café", `"Мурка 🐈 café"`},
	{"invalid byte", "a\xffb", `"a\ufffdb"`},
	{"truncated rune", "abc\xe2\x82", `"abc\ufffd\ufffd"`},
	{"surrogate half", "x\xed\xa0\x80y", `"x\ufffd\ufffd\ufffdy"`},
	{"overlong", "\xc0\xaf", `"\ufffd\ufffd"`},
	{"8 plain then quote", `12345678"`, `"12345678\""`},
	{"quote at 7", `1234567"12345678`, `"1234567\"12345678"`},
	{"control at 15", "123456789012345\x01", `"123456789012345\u0001"`},
	{"high byte at 8", "12345678\xc3\xa9", `"12345678é"`},
	{"ampersand at 0 of second word", "12345678&", `"12345678\u0026"`},
	{"16 plain", "abcdefghijklmnop", `"abcdefghijklmnop"`},
}

// TestAppendString checks AppendString's exact output and that
// encoding/json decodes it to the string encoding/json's own output decodes
// to: the string itself when it is valid UTF-8.
func TestAppendString(t *testing.T) {
	for _, c := range encodeStrings {
		t.Run(c.name, func(t *testing.T) {
			got := wirejson.AppendString([]byte("prefix:"), c.in)
			if diff := cmp.Diff("prefix:"+c.want, string(got)); diff != "" {
				t.Errorf("AppendString(%q) (-want +got):\n%s", c.in, diff)
			}
			encodeCheckString(t, c.in)
		})
	}
}

// FuzzAppendString checks, for any string, that AppendString gives valid
// JSON that encoding/json decodes to what encoding/json's own encoding
// decodes to, byte for byte the same as encoding/json's encoding except for
// the escapes of backspace and form feed.
func FuzzAppendString(f *testing.F) {
	for _, c := range encodeStrings {
		f.Add(c.in)
	}
	f.Fuzz(encodeCheckString)
}

// encodeCheckString checks AppendString(s) against encoding/json.
func encodeCheckString(t *testing.T, s string) {
	got := wirejson.AppendString(nil, s)
	if !json.Valid(got) {
		t.Fatalf("AppendString(%q) = %s: not valid JSON", s, got)
	}
	want, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.ContainsAny(s, "\b\f") && !bytes.Equal(got, want) {
		t.Errorf("AppendString(%q) = %s, encoding/json gives %s", s, got, want)
	}
	var gotValue, wantValue string
	if err := json.Unmarshal(got, &gotValue); err != nil {
		t.Fatalf("decoding %s: %v", got, err)
	}
	if err := json.Unmarshal(want, &wantValue); err != nil {
		t.Fatal(err)
	}
	if gotValue != wantValue {
		t.Errorf("AppendString(%q) decodes to %q, encoding/json's encoding to %q", s, gotValue, wantValue)
	}
	if utf8.ValidString(s) && gotValue != s {
		t.Errorf("AppendString(%q) decodes to %q, not to itself", s, gotValue)
	}
}
