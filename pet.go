package petstore

import (
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
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
	errNameTooLong = invalidPet(msgNameTooLong)
	errPetStatus   = invalidPet(msgPetStatus)
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

// Validate reports the first reason why the handler would reject p, or nil:
// a name that is blank, longer than MaxNameLength characters, not valid
// UTF-8 or holding control characters; a CategoryID below 1; or a Status
// that is set but not valid. The error wraps ErrInvalidPet, and its text
// names the field and the rule, without the field's value.
func (p NewPet) Validate() error {
	switch {
	case strings.TrimSpace(p.Name) == "":
		return invalidPet("name must not be blank")
	case !utf8.ValidString(p.Name):
		return invalidPet("name must be valid UTF-8")
	case utf8.RuneCountInString(p.Name) > MaxNameLength:
		return errNameTooLong
	case strings.IndexFunc(p.Name, unicode.IsControl) >= 0:
		return invalidPet("name must not contain control characters")
	case p.CategoryID < 1:
		return invalidPet("categoryId must be 1 or greater")
	case p.Status != "" && !p.Status.Valid():
		return errPetStatus
	}
	return nil
}

// invalidPet is an error that wraps ErrInvalidPet and reads as its message
// alone, so that the handler can send it to the client as it is.
type invalidPet string

func (e invalidPet) Error() string        { return string(e) }
func (e invalidPet) Is(target error) bool { return target == ErrInvalidPet }

// Pet is a stored pet: a NewPet with the ID its store assigned.
type Pet struct {
	// ID is positive and unique within the pet's store.
	ID int64 `json:"id"`
	NewPet
}

// MaxNameLength is the largest number of characters (runes) in a pet's name
// that the handler accepts.
const MaxNameLength = 256

// ListOptions selects the pets that Store.List returns.
type ListOptions struct {
	// Status, when set, selects only the pets with this status.
	Status Status
	// Limit caps the number of pets returned; 0 means no cap.
	Limit int
	// After selects only the pets whose ID is greater than After.
	After int64
}
