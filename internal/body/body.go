// Package body reads request bodies: the JSON media type check and a
// bounded read.
package body

import (
	"errors"
	"io"
	"net/http"
	"strings"
)

// ErrTooLarge is returned by Read for a body over the limit.
var ErrTooLarge = errors.New("request body too large")

// IsJSON reports whether a Content-Type header value names application/json,
// in any case, with or without parameters such as charset.
func IsJSON(contentType string) bool {
	if contentType == "application/json" {
		return true
	}
	mediaType, _, _ := strings.Cut(contentType, ";")
	return strings.EqualFold(strings.TrimSpace(mediaType), "application/json")
}

// Read reads r's body and returns it. It returns ErrTooLarge, without
// reading further, as soon as the body is longer than limit bytes.
func Read(r *http.Request, limit int64) ([]byte, error) {
	if r.ContentLength > limit {
		return nil, ErrTooLarge
	}
	if r.Body == nil || r.Body == http.NoBody {
		return nil, nil
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	if int64(len(b)) > limit {
		return nil, ErrTooLarge
	}
	return b, err
}
