package petstore

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/petstore-go/petstore/httpapi"
)

// Status is the availability of a pet. The zero value means the pet has no
// status: such a pet is listed when no filter is given and never under one.
type Status string

// The statuses a pet can have.
const (
	StatusAvailable Status = "available"
	StatusPending   Status = "pending"
	StatusSold      Status = "sold"
)

// statuses are the valid statuses, in the order of the OpenAPI document's
// PetStatus enum. Every other list of them, and every message that names
// them, is made from it. It is never modified.
var statuses = [...]Status{StatusAvailable, StatusPending, StatusSold}

// Statuses returns the valid statuses, in the order in which the OpenAPI
// document lists them.
func Statuses() []Status { return slices.Clone(statuses[:]) }

// Valid reports whether s is one of StatusAvailable, StatusPending and
// StatusSold. The empty Status is not valid: it means "no status".
func (s Status) Valid() bool {
	return slices.Contains(statuses[:], s) && s != ""
}

// statusChoices names the valid statuses for messages, as in `"available",
// "pending" or "sold"`.
var statusChoices = quotedChoices(statuses[:])

// quotedChoices returns the values quoted and joined with commas and a final
// "or".
func quotedChoices(values []Status) string {
	var b strings.Builder
	for i, v := range values {
		switch {
		case i == 0:
		case i == len(values)-1:
			b.WriteString(" or ")
		default:
			b.WriteString(", ")
		}
		b.WriteString(strconv.Quote(string(v)))
	}
	return b.String()
}

// The messages that name a limit or the statuses, made once from the
// constants (MaxNameLength, MaxPageSize, MaxIdempotencyKeyLength) and
// statuses, so that answering with one allocates nothing.
var (
	msgNameTooLong = "name is longer than " + strconv.Itoa(MaxNameLength) + " characters; shorten it"
	msgPetStatus   = "status must be " + statusChoices + ", or empty"
	msgBodyStatus  = "status must be " + statusChoices + "; omit it for none"
	msgQueryStatus = "status must be " + statusChoices
	msgQueryLimit  = "limit must be an integer from 1 to " + strconv.Itoa(MaxPageSize)
	msgKeyLength   = "Idempotency-Key must be 1 to " + strconv.Itoa(MaxIdempotencyKeyLength) + " characters long"
	errPetStatus   = invalidPet{field: "status", msg: msgPetStatus}
)

// NewPet is a pet as a client submits it, before the store assigns an ID.
type NewPet struct {
	// Name is the pet's name: valid UTF-8 without control characters,
	// not blank, at most MaxNameLength characters.
	Name string `json:"name"`
	// CategoryID identifies the category the pet belongs to. It is positive.
	CategoryID int64 `json:"categoryId"`
	// Status is the pet's availability, or empty when it has none.
	Status Status `json:"status,omitempty"`
}

// Validate reports every reason why the handler would reject p, or nil: a
// name that is blank, longer than MaxNameLength characters, not valid UTF-8
// or holding control characters; a CategoryID below 1; or a Status that is
// set but not valid. It reports at most one problem per field, in the order
// name, categoryId, status. The error wraps ErrInvalidPet; with several
// problems it is an errors.Join of one error for each, whose text is their
// messages, one per line. Each message names the field and the rule,
// without the field's value.
func (p NewPet) Validate() error {
	var problems []error
	if msg := nameProblem(p.Name); msg != "" {
		problems = append(problems, invalidPet{field: "name", msg: msg})
	}
	if p.CategoryID < 1 {
		problems = append(problems, invalidPet{field: "categoryId", msg: "categoryId must be 1 or greater"})
	}
	if p.Status != "" && !p.Status.Valid() {
		problems = append(problems, errPetStatus)
	}
	if len(problems) == 1 {
		return problems[0]
	}
	return errors.Join(problems...)
}

// nameProblem says what is wrong with a pet's name, or "".
func nameProblem(name string) string {
	switch {
	case strings.TrimSpace(name) == "":
		return "name must not be blank"
	case !utf8.ValidString(name):
		return "name must be valid UTF-8"
	case utf8.RuneCountInString(name) > MaxNameLength:
		return msgNameTooLong
	case strings.IndexFunc(name, unicode.IsControl) >= 0:
		return "name must not contain control characters"
	}
	return ""
}

// invalidPet is one problem with one field of a pet: an error that wraps
// ErrInvalidPet and reads as its message alone, so that the handler can
// send it to the client as it is.
type invalidPet struct {
	field string // the field's JSON name
	msg   string
}

func (e invalidPet) Error() string        { return e.msg }
func (e invalidPet) Is(target error) bool { return target == ErrInvalidPet }

// petProblems returns the problems with fields that err, from Validate or a
// Store, reports, in their order, as the handler answers them.
func petProblems(err error) []httpapi.FieldError {
	var problems []httpapi.FieldError
	var walk func(error)
	walk = func(err error) {
		switch e := err.(type) {
		case invalidPet:
			problems = append(problems, httpapi.FieldError{Pointer: "/" + e.field, Detail: e.msg})
		case interface{ Unwrap() []error }:
			for _, err := range e.Unwrap() {
				walk(err)
			}
		case interface{ Unwrap() error }:
			walk(e.Unwrap())
		}
	}
	walk(err)
	return problems
}

// Pet is a stored pet: a NewPet with the ID its store assigned.
type Pet struct {
	// ID is positive and unique within the pet's store.
	ID int64 `json:"id"`
	NewPet
}

// ListOptions selects the pets that Store.List returns.
type ListOptions struct {
	// Status, when set, selects only the pets with this status.
	Status Status
	// Limit caps the number of pets returned; 0 means no cap.
	Limit int
	// After selects only the pets whose ID is greater than After.
	After int64
}
