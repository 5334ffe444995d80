package wirejson_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/petstore-go/petstore/internal/wirejson"
)

// decodeAll reads data as one object whose members named s... are strings
// and i... are integers; any other member is an error. It returns the
// members in order, as "name=value".
func decodeAll(data []byte) ([]string, error) {
	var got []string
	d := wirejson.NewDecoder(data)
	err := d.Object(func(name []byte) error {
		n := string(name)
		switch {
		case strings.HasPrefix(n, "s"):
			v, err := d.String()
			if err != nil {
				return err
			}
			got = append(got, n+"="+v)
		case strings.HasPrefix(n, "i"):
			v, err := d.Int64()
			if err != nil {
				return err
			}
			got = append(got, fmt.Sprintf("%s=%d", n, v))
		default:
			return errors.New("unknown member " + n)
		}
		return nil
	})
	return got, err
}

func TestDecoder(t *testing.T) {
	tests := []struct {
		doc     string
		want    []string
		wantErr string // "" for success, "null" for ErrNull, else a *SyntaxError's text prefix
	}{
		{`{}`, nil, ""},
		{` {"s":"a","i":1} `, []string{"s=a", "i=1"}, ""},
		{"\t\r\n{\"s\" : \"a\" }\n", []string{"s=a"}, ""},
		{`{"s":"\"\\\/\b\f\n\r\t"}`, []string{"s=\"\\/\b\f\n\r\t"}, ""},
		{`{"s":"\u00e9\u20AC\ud83d\udc36"}`, []string{"s=é€🐶"}, ""},
		{`{"\u0073":"escaped name"}`, []string{"s=escaped name"}, ""},
		{`{"s":"é€🐶"}`, []string{"s=é€🐶"}, ""},
		{`{"i":-9223372036854775808,"i2":9223372036854775807,"i3":0,"i4":-0}`, []string{"i=-9223372036854775808", "i2=9223372036854775807", "i3=0", "i4=0"}, ""},
		{`{"s":"a","s":"b"}`, []string{"s=a", "s=b"}, ""}, // duplicates are the caller's to reject
		{``, nil, "empty document"},
		{`   `, nil, "empty document"},
		{`[]`, nil, "expected a JSON object"},
		{`null`, nil, "expected a JSON object"},
		{"\ufeff{}", nil, "expected a JSON object"},
		{`{`, nil, "expected a member name"},
		{`{"s"`, nil, "expected a colon"},
		{`{"s":"a"`, nil, "unexpected end of document; the object is not closed"},
		{`{"s":"a",}`, nil, "expected a member name"},
		{`{"s":"a"}x`, nil, "unexpected data after the JSON object"},
		{`{"s":"a"}{}`, nil, "unexpected data after the JSON object"},
		{"{\"s\":\"a\"}\x00", nil, "unexpected data after the JSON object"},
		{`{s:"a"}`, nil, "expected a member name"},
		{`{'s':'a'}`, nil, "expected a member name"},
		{`{"s":null}`, nil, "null"},
		{`{"i":null}`, nil, "null"},
		{`{"s":nul}`, nil, "expected a JSON value"},
		{`{"s":1}`, nil, "type: expected a string"},
		{`{"s":{"a":[1,2.5e-3,true,null,"x"]}}`, nil, "type: expected a string"},
		{`{"s":[1,}`, nil, "expected a JSON value"},
		{`{"i":"1"}`, nil, "type: expected an integer"},
		{`{"i":true}`, nil, "type: expected an integer"},
		{`{"i":+1}`, nil, "expected a JSON value"},
		{`{"i":-}`, nil, "expected a digit"},
		{`{"i":1.}`, nil, "expected a digit after the decimal point"},
		{`{"i":1e}`, nil, "expected a digit in the exponent"},
		{`{"i":-01}`, nil, "leading zero"},
		{`{"i":01}`, nil, "leading zero"},
		{`{"i":1.0}`, nil, "type: expected an integer without fraction"},
		{`{"i":1e2}`, nil, "type: expected an integer without fraction"},
		{`{"i":1E2}`, nil, "type: expected an integer without fraction"},
		{`{"i":9223372036854775808}`, nil, "type: integer out of range"},
		{`{"i":-9223372036854775809}`, nil, "type: integer out of range"},
		{`{"i":` + strings.Repeat("9", 10000) + `}`, nil, "type: integer out of range"},
		{`{"i":1 2}`, nil, "expected a comma"},
		{"{\"s\":\"a\x00b\"}", nil, "control character"},
		{"{\"s\":\"a\nb\"}", nil, "control character"},
		{"{\"s\":\"a\xffb\"}", nil, "invalid UTF-8"},
		{"{\"s\":\"a\xc3\"}", nil, "invalid UTF-8"},
		{"{\"s\":\"\xed\xa0\x80\"}", nil, "invalid UTF-8"}, // an encoded surrogate
		{`{"s":"\ud800"}`, nil, "unpaired UTF-16 surrogate"},
		{`{"s":"\udc00\ud800"}`, nil, "unpaired UTF-16 surrogate"},
		{`{"s":"\ud800\u0041"}`, nil, "unpaired UTF-16 surrogate"},
		{`{"s":"\x41"}`, nil, "invalid escape"},
		{`{"s":"\u12"}`, nil, "invalid \\u escape"},
		{`{"s":"\u12`, nil, "unexpected end of document in a \\u escape"},
		{`{"s":"\uZZZZ"}`, nil, "invalid \\u escape"},
		{`{"s":"\`, nil, "unexpected end of document in an escape"},
		{`{"s":"abc`, nil, "unexpected end of document in a string"},
		{`{"s":` + strings.Repeat("[", 100000), nil, "values nested more than 64 deep"},
	}
	for _, tt := range tests {
		got, err := decodeAll([]byte(tt.doc))
		name := tt.doc
		if len(name) > 40 {
			name = name[:40] + "…"
		}
		switch {
		case tt.wantErr == "":
			if err != nil {
				t.Errorf("%q: %v", name, err)
			} else if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("%q (-want +got):\n%s", name, diff)
			}
		case tt.wantErr == "null":
			if !errors.Is(err, wirejson.ErrNull) {
				t.Errorf("%q: err = %v, want ErrNull", name, err)
			}
		case strings.HasPrefix(tt.wantErr, "type: "):
			if !errors.Is(err, wirejson.ErrType) || err.Error() != strings.TrimPrefix(tt.wantErr, "type: ") && !strings.HasPrefix(err.Error(), strings.TrimPrefix(tt.wantErr, "type: ")) {
				t.Errorf("%q: err = %v, want ErrType with %q", name, err, tt.wantErr)
			}
		default:
			var se *wirejson.SyntaxError
			if !errors.As(err, &se) {
				t.Errorf("%q: err = %v, want a *SyntaxError", name, err)
				continue
			}
			if !strings.HasPrefix(se.Msg, tt.wantErr) {
				t.Errorf("%q: error %q, want one beginning %q", name, se.Msg, tt.wantErr)
			}
			if se.Offset < 0 || se.Offset > len(tt.doc) {
				t.Errorf("%q: offset %d outside the document", name, se.Offset)
			}
		}
	}
}

// decodeWant is what encoding/json makes of a document, as decodeAll
// reports it, or ok false when decodeAll's rules do not apply to it.
func decodeWant(data []byte) ([]string, bool) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	tok, err := d.Token()
	if err != nil || tok != json.Delim('{') {
		return nil, false
	}
	var got []string
	for d.More() {
		tok, err := d.Token()
		if err != nil {
			return nil, false
		}
		name := tok.(string)
		tok, err = d.Token()
		if err != nil {
			return nil, false
		}
		switch v := tok.(type) {
		case string:
			if !strings.HasPrefix(name, "s") {
				return nil, false
			}
			got = append(got, name+"="+v)
		case json.Number:
			n, err := v.Int64()
			if err != nil || !strings.HasPrefix(name, "i") {
				return nil, false
			}
			got = append(got, fmt.Sprintf("%s=%d", name, n))
		default:
			return nil, false
		}
	}
	if _, err := d.Token(); err != nil {
		return nil, false
	}
	if _, err := d.Token(); err == nil {
		return nil, false // more after the object
	}
	return got, true
}

// FuzzDecoder compares Decoder with encoding/json: every document that
// Decoder accepts, encoding/json accepts too and reads the same members
// and values from; a rejection is a *SyntaxError with an offset inside the
// document, ErrNull, ErrType, or the caller's own error; and nothing panics.
func FuzzDecoder(f *testing.F) {
	for _, doc := range []string{
		`{"s":"a","i":1}`, `{"s":"\u00e9\ud83d\udc36","i":-12}`, `{"s":null}`, `{"i":1e2}`,
		"{\"s\":\"a\xffb\"}", `{"s":"\ud800"}`, ` { "i" : 0 } `, `{"s":"a"}{}`,
	} {
		f.Add([]byte(doc))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := decodeAll(data)
		if err != nil {
			var se *wirejson.SyntaxError
			switch {
			case errors.As(err, &se):
				if se.Offset < 0 || se.Offset > len(data) {
					t.Fatalf("offset %d outside the %d-byte document", se.Offset, len(data))
				}
			case errors.Is(err, wirejson.ErrNull), errors.Is(err, wirejson.ErrType), strings.HasPrefix(err.Error(), "unknown member"):
			default:
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		if !json.Valid(data) {
			t.Fatalf("Decoder accepted %q, which encoding/json rejects", data)
		}
		for _, m := range got {
			if !utf8.ValidString(m) {
				t.Fatalf("Decoder returned invalid UTF-8 %q", m)
			}
		}
		want, ok := decodeWant(data)
		if !ok {
			t.Fatalf("Decoder accepted %q, which encoding/json does not read as an object of strings and integers", data)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("members of %q (-encoding/json +Decoder):\n%s", data, diff)
		}
	})
}

// TestDecoderReadsOnAfterTypeError checks that a value of another type is
// skipped whole, so that the members after it are read.
func TestDecoderReadsOnAfterTypeError(t *testing.T) {
	doc := `{"s1":{"a":[1,{"b":"}"}]},"i1":"x","i2":1.5,"s2":"ok","i3":7}`
	var got []string
	d := wirejson.NewDecoder([]byte(doc))
	err := d.Object(func(name []byte) error {
		var err error
		var v any
		if name[0] == 's' {
			v, err = d.String()
		} else {
			v, err = d.Int64()
		}
		switch {
		case errors.Is(err, wirejson.ErrType):
			got = append(got, string(name)+": "+err.Error())
		case err != nil:
			return err
		default:
			got = append(got, fmt.Sprintf("%s=%v", name, v))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"s1: expected a string", "i1: expected an integer",
		"i2: expected an integer without fraction or exponent", "s2=ok", "i3=7"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("members (-want +got):\n%s", diff)
	}
}
