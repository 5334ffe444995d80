package petstore

import (
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

// Valid reports whether s is one of StatusAvailable, StatusPending and
// StatusSold. The empty Status is not valid: it means "no status".
func (s Status) Valid() bool {
	switch s {
	case StatusAvailable, StatusPending, StatusSold:
		return true
	}
	return false
}

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
		return invalidPet("name is longer than " + strconv.Itoa(MaxNameLength) + " characters; shorten it")
	case strings.IndexFunc(p.Name, unicode.IsControl) >= 0:
		return invalidPet("name must not contain control characters")
	case p.CategoryID < 1:
		return invalidPet("categoryId must be 1 or greater")
	case p.Status != "" && !p.Status.Valid():
		return invalidPet(`status must be "available", "pending" or "sold", or empty`)
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
