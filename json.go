package petstore

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/petstore-go/petstore/httpapi"
)

// marshalPets returns pets as a JSON array, [] for none, ending with a
// newline.
func marshalPets(pets []Pet) []byte {
	if pets == nil {
		pets = []Pet{}
	}
	return marshalLine(pets)
}

// marshalLine returns v as JSON, ending with a newline. v is a value that
// encoding/json always encodes, such as a Pet.
func marshalLine(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // a Pet or a page of them cannot fail to encode
	}
	return append(b, '\n')
}

// decodeNewPet decodes and validates the body of POST /pets. It accepts
// exactly one JSON object with the members name, categoryId and, optionally,
// status, each once, none null, and nothing else. A body that is not one
// JSON object is one problem; otherwise the error reports every problem with
// a member, each with a JSON Pointer to it, in the order of petMembers.
func decodeNewPet(body []byte) (NewPet, error) {
	p, problems, err := decodeNewPetText(body)
	switch {
	case err != nil:
		return NewPet{}, &requestError{code: httpapi.CodeInvalidBody, message: err.Error()}
	case len(problems) > 0:
		return NewPet{}, invalidBody(problems)
	}
	return p, nil
}

// maxProblems caps the problems that one answer reports: a body of unknown
// members gets the first ones.
const maxProblems = 16

// petMembers are the members of a pet's JSON object in the order in which
// their problems are reported; problems with other members come after them.
var petMembers = [...]string{"/name", "/categoryId", "/status", "/id"}

// invalidBody is the error for a body with problems, which it reports in a
// stable order: by member, in the order of petMembers, then in the order of
// the body.
func invalidBody(problems []httpapi.FieldError) error {
	rank := func(f httpapi.FieldError) int {
		if i := slices.Index(petMembers[:], f.Pointer); i >= 0 {
			return i
		}
		return len(petMembers)
	}
	slices.SortStableFunc(problems, func(a, b httpapi.FieldError) int { return rank(a) - rank(b) })
	return &requestError{code: httpapi.CodeInvalidBody, message: joinDetails(problems), fields: problems}
}

// joinDetails is the message of an answer with problems: their details.
func joinDetails(problems []httpapi.FieldError) string {
	if len(problems) == 1 {
		return problems[0].Detail
	}
	details := make([]string, len(problems))
	for i, f := range problems {
		details[i] = f.Detail
	}
	return strings.Join(details, "; ")
}

// decodeNewPetText reads body as decodeNewPet does. It returns the problems
// with members, or err, whose text is meant for the client, when the body
// is not one JSON object.
func decodeNewPetText(body []byte) (p NewPet, problems []httpapi.FieldError, err error) {
	if !utf8.Valid(body) {
		return NewPet{}, nil, errors.New("the body is not valid: it is not valid UTF-8")
	}
	if loneSurrogate(body) {
		return NewPet{}, nil, errors.New("the body is not valid: a string has an unpaired UTF-16 surrogate")
	}
	problem := func(pointer, detail string) {
		if len(problems) < maxProblems {
			problems = append(problems, httpapi.FieldError{Pointer: pointer, Detail: detail})
		}
	}
	notValid := func(err error) (NewPet, []httpapi.FieldError, error) {
		return NewPet{}, nil, errors.New("the body is not valid: " + strings.TrimPrefix(err.Error(), "json: "))
	}
	d := json.NewDecoder(bytes.NewReader(body))
	if t, err := d.Token(); err != nil {
		return notValid(err)
	} else if t != json.Delim('{') {
		return NewPet{}, nil, errors.New("the body is not valid: it must be one JSON object")
	}
	seen := make(map[string]bool, 3)
	for d.More() {
		t, err := d.Token()
		if err != nil {
			return notValid(err)
		}
		name := t.(string) // a member's name, as More and Token have checked
		var raw json.RawMessage
		if err := d.Decode(&raw); err != nil {
			return notValid(err)
		}
		want := ""
		switch name {
		case "name":
			want = "a string"
		case "categoryId":
			want = "an integer"
		case "status":
			want = statusChoices
		case "id":
			problem("/id", "id is assigned by the store; remove it from the body")
			continue
		default:
			problem(jsonPointer(name), "unknown member "+quoteShort(name)+"; a pet has name, categoryId and status")
			continue
		}
		if seen[name] {
			problem("/"+name, name+" is given more than once; give it once")
			continue
		}
		seen[name] = true
		if string(raw) == "null" {
			problem("/"+name, name+" is null; it must be "+want)
			continue
		}
		switch name {
		case "name":
			if json.Unmarshal(raw, &p.Name) != nil {
				problem("/name", "name must be a string: expected a string")
			}
		case "categoryId":
			if json.Unmarshal(raw, &p.CategoryID) != nil {
				problem("/categoryId", "categoryId must be an integer: "+integerProblem(raw))
			}
		case "status":
			var st string
			if json.Unmarshal(raw, &st) != nil {
				problem("/status", "status must be "+statusChoices+": expected a string")
			} else if p.Status = Status(st); !p.Status.Valid() {
				problem("/status", msgBodyStatus)
			}
		}
	}
	if _, err := d.Token(); err != nil { // the closing brace
		return notValid(err)
	}
	if _, err := d.Token(); err != io.EOF {
		return NewPet{}, nil, errors.New("the body is not valid: it must be one JSON object, with nothing after it")
	}
	if !seen["name"] {
		problem("/name", "name is required")
	}
	if !seen["categoryId"] {
		problem("/categoryId", "categoryId is required")
	}
	// The rules of Validate, for the members read without a problem.
	for _, f := range petProblems(p.Validate()) {
		if !slices.ContainsFunc(problems, func(g httpapi.FieldError) bool { return g.Pointer == f.Pointer }) {
			problem(f.Pointer, f.Detail)
		}
	}
	return p, problems, nil
}

// loneSurrogate reports whether a string of the JSON text b has an escaped
// UTF-16 surrogate that is not half of a pair, which encoding/json would
// decode as U+FFFD.
func loneSurrogate(b []byte) bool {
	for i := 0; i+6 <= len(b); i++ {
		if b[i] != '\\' {
			continue
		}
		if b[i+1] != 'u' {
			i++ // another escape, such as \\ or \"
			continue
		}
		r := escaped(b[i+2 : i+6])
		i += 5
		switch {
		case 0xdc00 <= r && r <= 0xdfff:
			return true // a low half without a high one before it
		case 0xd800 <= r && r <= 0xdbff:
			if i+7 > len(b) || b[i+1] != '\\' || b[i+2] != 'u' {
				return true
			}
			if r := escaped(b[i+3 : i+7]); r < 0xdc00 || r > 0xdfff {
				return true
			}
			i += 6
		}
	}
	return false
}

// escaped returns the code unit of the four hexadecimal digits of a \u
// escape, or 0 when they are not.
func escaped(hex []byte) uint64 {
	r, err := strconv.ParseUint(string(hex), 16, 16)
	if err != nil {
		return 0 // not JSON: the decoder says why
	}
	return r
}

// integerProblem says why the JSON value raw, which encoding/json would not
// decode into an int64, is not an integer in the range of int64.
func integerProblem(raw []byte) string {
	switch {
	case raw[0] != '-' && (raw[0] < '0' || raw[0] > '9'):
		return "expected an integer"
	case bytes.ContainsAny(raw, ".eE"):
		return "expected an integer without fraction or exponent"
	}
	return "integer out of range"
}

// jsonPointer returns the JSON Pointer (RFC 6901) to the member name of the
// document's object, with the name cut as shortName cuts it.
func jsonPointer(name string) string {
	s, _ := shortName(name)
	return "/" + strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}

// quoteShort quotes a member name for a message, cut as shortName cuts it.
func quoteShort(name string) string {
	s, cut := shortName(name)
	if cut {
		return strconv.Quote(s) + "…"
	}
	return strconv.Quote(s)
}

// shortName returns a member name cut to a readable length, and whether it
// was cut.
func shortName(name string) (string, bool) {
	const max = 40
	if len(name) <= max {
		return name, false
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(name[cut]) {
		cut--
	}
	return name[:cut], true
}
