// Package wirejson reads and writes the JSON text of the API without
// reflection: a strict decoder for request objects, and an encoder that
// appends strings exactly as encoding/json would write them.
package wirejson

import (
	"bytes"
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

// ErrType is wrapped by the errors of the value methods when the member's
// value is well-formed JSON of another type, or a number that is not an
// int64. The value has then been skipped, so that the object can be read
// on: the error is about the member, not the document.
var ErrType = errors.New("wirejson: value of another type")

// typeError is an error wrapping ErrType whose text is msg.
type typeError string

func (e typeError) Error() string        { return string(e) }
func (e typeError) Is(target error) bool { return target == ErrType }

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
// value methods (String, StringBytes, Int64, Skip) or return an error, which Object returns.
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
		return nil, d.skipMistyped("expected a string")
	}
	return d.stringBytes()
}

// Skip reads over the next value, of any type, as the value of a member
// that the caller does not read. It returns a *SyntaxError for a malformed
// value.
func (d *Decoder) Skip() error { return d.skip(0) }

// skipMistyped skips the value at d.pos, which is not of the type a value
// method expected, and returns an error wrapping ErrType with the text msg,
// or the *SyntaxError that makes the value unreadable.
func (d *Decoder) skipMistyped(msg string) error {
	if err := d.skip(0); err != nil {
		return err
	}
	return typeError(msg)
}

// maxDepth is how deeply arrays and objects may nest in a skipped value.
const maxDepth = 64

// skip reads over one JSON value of any type, nested depth deep.
func (d *Decoder) skip(depth int) error {
	if depth > maxDepth {
		return d.errorf("values nested more than %d deep", maxDepth)
	}
	if d.pos >= len(d.data) {
		return d.errorf("unexpected end of document; expected a value")
	}
	switch c := d.data[d.pos]; {
	case c == '"':
		_, err := d.stringBytes()
		return err
	case c == '{', c == '[':
		end := byte('}')
		if c == '[' {
			end = ']'
		}
		d.pos++
		d.skipSpace()
		if d.pos < len(d.data) && d.data[d.pos] == end {
			d.pos++
			return nil
		}
		for {
			d.skipSpace()
			if end == '}' {
				if d.pos >= len(d.data) || d.data[d.pos] != '"' {
					return d.errorf("expected a member name in double quotes")
				}
				if _, err := d.stringBytes(); err != nil {
					return err
				}
				d.skipSpace()
				if d.pos >= len(d.data) || d.data[d.pos] != ':' {
					return d.errorf("expected a colon after the member name")
				}
				d.pos++
				d.skipSpace()
			}
			if err := d.skip(depth + 1); err != nil {
				return err
			}
			d.skipSpace()
			if d.pos >= len(d.data) {
				return d.errorf("unexpected end of document in a nested value")
			}
			if d.data[d.pos] == end {
				d.pos++
				return nil
			}
			if d.data[d.pos] != ',' {
				return d.errorf("expected a comma or the end of a nested value")
			}
			d.pos++
		}
	case c == '-' || '0' <= c && c <= '9':
		return d.number()
	}
	for _, lit := range [...]string{"true", "false", "null"} {
		if len(d.data)-d.pos >= len(lit) && string(d.data[d.pos:d.pos+len(lit)]) == lit {
			d.pos += len(lit)
			return nil
		}
	}
	return d.errorf("expected a JSON value")
}

// number reads over a JSON number (RFC 8259, section 6).
func (d *Decoder) number() error {
	start := d.pos
	if d.data[d.pos] == '-' {
		d.pos++
	}
	digits := d.digits()
	switch {
	case digits == 0:
		return d.errorf("expected a digit")
	case digits > 1 && d.data[start] == '0', digits > 1 && d.data[start] == '-' && d.data[start+1] == '0':
		d.pos = start
		return d.errorf("leading zero in a number")
	}
	if d.pos < len(d.data) && d.data[d.pos] == '.' {
		d.pos++
		if d.digits() == 0 {
			return d.errorf("expected a digit after the decimal point")
		}
	}
	if d.pos < len(d.data) && (d.data[d.pos] == 'e' || d.data[d.pos] == 'E') {
		d.pos++
		if d.pos < len(d.data) && (d.data[d.pos] == '+' || d.data[d.pos] == '-') {
			d.pos++
		}
		if d.digits() == 0 {
			return d.errorf("expected a digit in the exponent")
		}
	}
	return nil
}

// digits reads over ASCII digits and returns how many it read.
func (d *Decoder) digits() int {
	start := d.pos
	for d.pos < len(d.data) && '0' <= d.data[d.pos] && d.data[d.pos] <= '9' {
		d.pos++
	}
	return d.pos - start
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
// written without a fraction or exponent. It returns ErrNull for null, an
// error wrapping ErrType for a value of another type or another number,
// and a *SyntaxError for a malformed value.
func (d *Decoder) Int64() (int64, error) {
	if d.null() {
		return 0, ErrNull
	}
	if d.pos >= len(d.data) || d.data[d.pos] != '-' && (d.data[d.pos] < '0' || d.data[d.pos] > '9') {
		return 0, d.skipMistyped("expected an integer")
	}
	start := d.pos
	if err := d.number(); err != nil {
		return 0, err
	}
	text := d.data[start:d.pos]
	if bytes.ContainsAny(text, ".eE") {
		return 0, typeError("expected an integer without fraction or exponent")
	}
	n, err := strconv.ParseInt(string(text), 10, 64)
	if err != nil {
		return 0, typeError("integer out of range")
	}
	return n, nil
}
