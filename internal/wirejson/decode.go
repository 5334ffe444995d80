// Package wirejson reads and writes the JSON text of the API without
// reflection: a strict decoder for request objects, and an encoder that
// appends strings exactly as encoding/json would write them.
package wirejson

import (
	"errors"
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// A Decoder reads one JSON object of scalar members strictly: the document
// must be exactly one object, with nothing but white space after it, and
// every member value is read with the method that names its expected type.
// Unlike encoding/json it rejects invalid UTF-8 and lone surrogates instead
// of replacing them, matches member names exactly (case matters), and leaves
// the decision about unknown, duplicate and null members to the caller.
//
// A Decoder allocates nothing except the strings it returns. The zero value
// is not usable: call NewDecoder.
type Decoder struct {
	data []byte
	pos  int
}

// NewDecoder returns a Decoder that reads data.
func NewDecoder(data []byte) *Decoder { return &Decoder{data: data} }

// A SyntaxError describes why a document was rejected. Its message is meant
// for the client: it says where the problem is and what was expected.
type SyntaxError struct {
	Offset int    // the byte offset in the document
	Msg    string // what was wrong
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("%s at byte offset %d", e.Msg, e.Offset)
}

// ErrNull is returned by the value methods when the member's value is null.
var ErrNull = errors.New("wirejson: value is null")

func (d *Decoder) errorf(format string, args ...any) error {
	return &SyntaxError{Offset: d.pos, Msg: fmt.Sprintf(format, args...)}
}

func (d *Decoder) skipSpace() {
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

// Object reads the document as one JSON object, calling member for each
// member name in order. member must read the value with exactly one of the
// value methods (String, StringBytes, Int64) or return an error, which Object returns.
func (d *Decoder) Object(member func(name []byte) error) error {
	d.skipSpace()
	if d.pos >= len(d.data) {
		return d.errorf("empty document; send a JSON object")
	}
	if d.data[d.pos] != '{' {
		return d.errorf("expected a JSON object")
	}
	d.pos++
	d.skipSpace()
	if d.pos < len(d.data) && d.data[d.pos] == '}' {
		d.pos++
	} else {
		for {
			d.skipSpace()
			if d.pos >= len(d.data) || d.data[d.pos] != '"' {
				return d.errorf("expected a member name in double quotes")
			}
			name, err := d.stringBytes()
			if err != nil {
				return err
			}
			d.skipSpace()
			if d.pos >= len(d.data) || d.data[d.pos] != ':' {
				return d.errorf("expected a colon after the member name")
			}
			d.pos++
			d.skipSpace()
			if err := member(name); err != nil {
				return err
			}
			d.skipSpace()
			if d.pos >= len(d.data) {
				return d.errorf("unexpected end of document; the object is not closed")
			}
			if d.data[d.pos] == '}' {
				d.pos++
				break
			}
			if d.data[d.pos] != ',' {
				return d.errorf("expected a comma or the end of the object")
			}
			d.pos++
		}
	}
	d.skipSpace()
	if d.pos != len(d.data) {
		return d.errorf("unexpected data after the JSON object")
	}
	return nil
}

// null consumes a null literal if one comes next.
func (d *Decoder) null() bool {
	if len(d.data)-d.pos >= 4 && string(d.data[d.pos:d.pos+4]) == "null" {
		d.pos += 4
		return true
	}
	return false
}

// String reads a JSON string value. It returns ErrNull for null and a
// *SyntaxError for any other kind of value or a malformed string.
func (d *Decoder) String() (string, error) {
	b, err := d.StringBytes()
	return string(b), err
}

// StringBytes is like String but returns the string's UTF-8 bytes, which may
// alias the document and are valid only as long as it is. Comparing them
// with constants, as in switch string(b), costs no allocation.
func (d *Decoder) StringBytes() ([]byte, error) {
	if d.null() {
		return nil, ErrNull
	}
	if d.pos >= len(d.data) || d.data[d.pos] != '"' {
		return nil, d.errorf("expected a string")
	}
	return d.stringBytes()
}

// stringBytes reads a JSON string starting at its opening quote. The result
// aliases the document when the string has no escapes and a fresh buffer
// when it does.
func (d *Decoder) stringBytes() ([]byte, error) {
	d.pos++ // opening quote
	start := d.pos
	var out []byte // nil until the first escape
	for d.pos < len(d.data) {
		c := d.data[d.pos]
		switch {
		case c == '"':
			s := d.data[start:d.pos]
			d.pos++
			if out != nil {
				return append(out, s...), nil
			}
			return s, nil
		case c == '\\':
			out = append(out, d.data[start:d.pos]...)
			r, err := d.escape()
			if err != nil {
				return nil, err
			}
			out = utf8.AppendRune(out, r)
			start = d.pos
		case c < 0x20:
			return nil, d.errorf("control character in a string; escape it")
		case c < utf8.RuneSelf:
			d.pos++
		default:
			r, size := utf8.DecodeRune(d.data[d.pos:])
			if r == utf8.RuneError && size == 1 {
				return nil, d.errorf("invalid UTF-8 in a string")
			}
			d.pos += size
		}
	}
	return nil, d.errorf("unexpected end of document in a string")
}

// escape reads the escape sequence at d.pos, which holds a backslash.
func (d *Decoder) escape() (rune, error) {
	d.pos++
	if d.pos >= len(d.data) {
		return 0, d.errorf("unexpected end of document in an escape")
	}
	c := d.data[d.pos]
	d.pos++
	switch c {
	case '"', '\\', '/':
		return rune(c), nil
	case 'b':
		return '\b', nil
	case 'f':
		return '\f', nil
	case 'n':
		return '\n', nil
	case 'r':
		return '\r', nil
	case 't':
		return '\t', nil
	case 'u':
		r, err := d.hex4()
		if err != nil {
			return 0, err
		}
		if !utf16.IsSurrogate(r) {
			return r, nil
		}
		if len(d.data)-d.pos >= 2 && d.data[d.pos] == '\\' && d.data[d.pos+1] == 'u' {
			d.pos += 2
			r2, err := d.hex4()
			if err != nil {
				return 0, err
			}
			if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
				return dec, nil
			}
		}
		return 0, d.errorf("unpaired UTF-16 surrogate in a string")
	}
	return 0, d.errorf("invalid escape sequence in a string")
}

func (d *Decoder) hex4() (rune, error) {
	if len(d.data)-d.pos < 4 {
		return 0, d.errorf("unexpected end of document in a \\u escape")
	}
	var r rune
	for _, c := range d.data[d.pos : d.pos+4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, d.errorf("invalid \\u escape in a string")
		}
		r = r<<4 | rune(c)
	}
	d.pos += 4
	return r, nil
}

// Int64 reads a JSON number that is an integer in the range of int64,
// written without a fraction or exponent. It returns ErrNull for null and a
// *SyntaxError for any other kind of value or number.
func (d *Decoder) Int64() (int64, error) {
	if d.null() {
		return 0, ErrNull
	}
	start := d.pos
	if d.pos < len(d.data) && d.data[d.pos] == '-' {
		d.pos++
	}
	digits := d.pos
	for d.pos < len(d.data) && '0' <= d.data[d.pos] && d.data[d.pos] <= '9' {
		d.pos++
	}
	if d.pos == digits {
		d.pos = start
		return 0, d.errorf("expected an integer")
	}
	if d.data[digits] == '0' && d.pos-digits > 1 {
		d.pos = start
		return 0, d.errorf("leading zero in a number")
	}
	if d.pos < len(d.data) {
		switch d.data[d.pos] {
		case '.', 'e', 'E':
			d.pos = start
			return 0, d.errorf("expected an integer without fraction or exponent")
		}
	}
	n, err := strconv.ParseInt(string(d.data[start:d.pos]), 10, 64)
	if err != nil {
		d.pos = start
		return 0, d.errorf("integer out of range")
	}
	return n, nil
}
