package main

import (
	"strings"

	"github.com/petstore-go/petstore"
)

// withoutUnavailable returns err's message without the words of
// petstore.ErrUnavailable, which a store adds so that the handler answers
// 503: at start-up they would read as if the server, not the database, were
// at fault.
func withoutUnavailable(err error) string {
	return strings.Replace(err.Error(), petstore.ErrUnavailable.Error()+": ", "", 1)
}
