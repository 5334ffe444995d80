package petstore

import (
	"errors"
	"fmt"
	"strconv"
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
// status, each once, none null, and nothing else.
func decodeNewPet(body []byte) (NewPet, error) {
	p, err := decodeNewPetText(body)
	if err != nil {
		return NewPet{}, &requestError{code: httpapi.CodeInvalidBody, message: err.Error()}
	}
	return p, nil
}

// decodeNewPetText is decodeNewPet with errors whose text is meant for the
// client.
func decodeNewPetText(body []byte) (NewPet, error) {
	var p NewPet
	var hasName, hasCategory, hasStatus bool
	d := wirejson.NewDecoder(body)
	err := d.Object(func(name []byte) error {
		var err error
		switch string(name) {
		case "name":
			if hasName {
				return errDuplicate("name")
			}
			hasName = true
			p.Name, err = d.String()
			return memberError("name", "a string", err)
		case "categoryId":
			if hasCategory {
				return errDuplicate("categoryId")
			}
			hasCategory = true
			p.CategoryID, err = d.Int64()
			return memberError("categoryId", "an integer", err)
		case "status":
			if hasStatus {
				return errDuplicate("status")
			}
			hasStatus = true
			var s []byte
			s, err = d.StringBytes()
			if err == nil {
				if p.Status = statusOf(s); p.Status == "" {
					return errors.New(msgBodyStatus)
				}
			}
			return memberError("status", statusChoices, err)
		case "id":
			return errors.New("id is assigned by the store; remove it from the body")
		}
		return fmt.Errorf("unknown member %s; a pet has name, categoryId and status", quoteShort(name))
	})
	if err != nil {
		var syntax *wirejson.SyntaxError
		if errors.As(err, &syntax) {
			return NewPet{}, fmt.Errorf("the body is not valid: %w", err)
		}
		return NewPet{}, err
	}
	switch {
	case !hasName:
		return NewPet{}, errors.New("name is required")
	case !hasCategory:
		return NewPet{}, errors.New("categoryId is required")
	}
	return p, p.Validate()
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

func errDuplicate(member string) error {
	return fmt.Errorf("%s is given more than once; give it once", member)
}

// memberError turns an error from reading a member's value into a message
// that names the member and what it should be.
func memberError(member, want string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, wirejson.ErrNull):
		return fmt.Errorf("%s is null; it must be %s", member, want)
	}
	return fmt.Errorf("%s must be %s: %w", member, want, err)
}

// quoteShort quotes a member name for a message, cut to a readable length.
func quoteShort(name []byte) string {
	const max = 40
	if len(name) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(name[cut]) {
			cut--
		}
		return strconv.Quote(string(name[:cut])) + "…"
	}
	return strconv.Quote(string(name))
}
