package petstore

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/petstore-go/petstore/httpapi"
	"github.com/petstore-go/petstore/internal/wirejson"
)

// appendPets appends pets to dst as a JSON array.
func appendPets(dst []byte, pets []Pet) []byte {
	dst = append(dst, '[')
	for i := range pets {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendPet(dst, &pets[i])
	}
	return append(dst, ']')
}

// appendPet appends p to dst as a JSON object, the same document that
// encoding/json makes of it.
func appendPet(dst []byte, p *Pet) []byte {
	dst = append(dst, `{"id":`...)
	dst = strconv.AppendInt(dst, p.ID, 10)
	dst = append(dst, `,"name":`...)
	dst = wirejson.AppendString(dst, p.Name)
	dst = append(dst, `,"categoryId":`...)
	dst = strconv.AppendInt(dst, p.CategoryID, 10)
	switch {
	case p.Status == "":
		return append(dst, '}')
	case p.Status.Valid(): // the valid statuses need no escaping
		dst = append(dst, `,"status":"`...)
		dst = append(dst, p.Status...)
		return append(dst, `"}`...)
	}
	dst = append(dst, `,"status":`...)
	dst = wirejson.AppendString(dst, string(p.Status))
	return append(dst, '}')
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
	var hasName, hasCategory, hasStatus bool
	problem := func(pointer, detail string) {
		if len(problems) < maxProblems {
			problems = append(problems, httpapi.FieldError{Pointer: pointer, Detail: detail})
		}
	}
	d := wirejson.NewDecoder(body)
	// member reads the value of a member, with read, unless it is given
	// again; a value of the wrong type is a problem with it, a malformed
	// one ends the reading.
	member := func(name, want string, seen *bool, read func() error) error {
		if *seen {
			problem("/"+name, name+" is given more than once; give it once")
			return d.Skip()
		}
		*seen = true
		err := read()
		switch {
		case err == nil:
			return nil
		case errors.Is(err, wirejson.ErrNull):
			problem("/"+name, name+" is null; it must be "+want)
			return nil
		case errors.Is(err, wirejson.ErrType):
			problem("/"+name, name+" must be "+want+": "+err.Error())
			return nil
		}
		return fmt.Errorf("%s must be %s: %w", name, want, err)
	}
	err = d.Object(func(name []byte) error {
		switch string(name) {
		case "name":
			return member("name", "a string", &hasName, func() (err error) {
				p.Name, err = d.String()
				return err
			})
		case "categoryId":
			return member("categoryId", "an integer", &hasCategory, func() (err error) {
				p.CategoryID, err = d.Int64()
				return err
			})
		case "status":
			return member("status", statusChoices, &hasStatus, func() error {
				s, err := d.StringBytes()
				if err == nil {
					if p.Status = statusOf(s); p.Status == "" {
						problem("/status", msgBodyStatus)
					}
				}
				return err
			})
		case "id":
			problem("/id", "id is assigned by the store; remove it from the body")
		default:
			problem(jsonPointer(name), "unknown member "+quoteShort(name)+"; a pet has name, categoryId and status")
		}
		return d.Skip()
	})
	if err != nil {
		var syntax *wirejson.SyntaxError
		if errors.As(err, &syntax) {
			return NewPet{}, nil, fmt.Errorf("the body is not valid: %w", err)
		}
		return NewPet{}, nil, err
	}
	if !hasName {
		problem("/name", "name is required")
	}
	if !hasCategory {
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

// jsonPointer returns the JSON Pointer (RFC 6901) to the member name of the
// document's object, with the name cut as shortName cuts it.
func jsonPointer(name []byte) string {
	s, _ := shortName(name)
	return "/" + strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}

// quoteShort quotes a member name for a message, cut as shortName cuts it.
func quoteShort(name []byte) string {
	s, cut := shortName(name)
	if cut {
		return strconv.Quote(s) + "…"
	}
	return strconv.Quote(s)
}

// shortName returns a member name cut to a readable length, and whether it
// was cut.
func shortName(name []byte) (string, bool) {
	const max = 40
	if len(name) <= max {
		return string(name), false
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(name[cut]) {
		cut--
	}
	return string(name[:cut]), true
}

// statusOf returns the valid status spelled s, as the constant (which costs
// no allocation), or "" when s is none.
func statusOf(s []byte) Status {
	for _, st := range statuses {
		if string(st) == string(s) {
			return st
		}
	}
	return ""
}
