package client

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/petstore-go/petstore"
)

// checkCreated returns an error wrapping ErrBadResponse unless pet, the
// answer to a create of sent, is sent with a positive ID. It names every
// field that differs.
func checkCreated(pet petstore.Pet, sent petstore.NewPet) error {
	var diffs []string
	if pet.ID <= 0 {
		diffs = append(diffs, fmt.Sprintf("its ID is %d, not positive", pet.ID))
	}
	if pet.Name != sent.Name {
		diffs = append(diffs, fmt.Sprintf("its name is %q, not %q", cut(pet.Name), cut(sent.Name)))
	}
	if pet.CategoryID != sent.CategoryID {
		diffs = append(diffs, fmt.Sprintf("its categoryId is %d, not %d", pet.CategoryID, sent.CategoryID))
	}
	if pet.Status != sent.Status {
		diffs = append(diffs, fmt.Sprintf("its status is %q, not %q", cut(string(pet.Status)), cut(string(sent.Status))))
	}
	if diffs == nil {
		return nil
	}
	return fmt.Errorf("%w: the pet answered is not the pet sent: %s", ErrBadResponse, strings.Join(diffs, "; "))
}

// checkPage returns an error wrapping ErrBadResponse for a page of more
// than size pets, or with a pet whose ID is not positive, whose name is
// longer than the API allows, or whose status is not status when status is
// set.
func checkPage(page []petstore.Pet, size int, status petstore.Status) error {
	if len(page) > size {
		return fmt.Errorf("%w: the page holds %d pets, more than the %d asked for", ErrBadResponse, len(page), size)
	}
	for i := range page {
		p := &page[i]
		switch {
		case p.ID <= 0:
			return fmt.Errorf("%w: the page holds a pet with ID %d, not positive", ErrBadResponse, p.ID)
		case len(p.Name) > petstore.MaxNameLength && utf8.RuneCountInString(p.Name) > petstore.MaxNameLength:
			return fmt.Errorf("%w: the page holds the pet %d with a name of %d bytes, longer than the %d characters the API allows",
				ErrBadResponse, p.ID, len(p.Name), petstore.MaxNameLength)
		case status != "" && p.Status != status:
			return fmt.Errorf("%w: the page holds the pet %d with the status %q, not %q as asked", ErrBadResponse, p.ID, cut(string(p.Status)), status)
		}
	}
	return nil
}
