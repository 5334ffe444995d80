package sqlitestore

import (
	"context"
	"errors"
	"fmt"

	"github.com/petstore-go/petstore"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// ErrClosed is wrapped by the errors of a Store's methods called after
// Close. The same errors wrap petstore.ErrUnavailable, so that a handler
// still serving during a shutdown answers 503.
var ErrClosed = errors.New("sqlitestore: store closed")

// closedError is the error of a method called after Close.
func closedError(file, op string) error {
	return fmt.Errorf("sqlitestore: %s: %s: %w: %w", file, op, ErrClosed, petstore.ErrUnavailable)
}

// wrapError describes err, returned by the operation op on file, as the
// petstore.Store contract asks: wrapping ctx.Err() when ctx is done, and
// petstore.ErrUnavailable when the file cannot be written or read now but
// may be later.
func wrapError(ctx context.Context, file, op string, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return fmt.Errorf("sqlitestore: %s: %s: %w (%v)", file, op, ctxErr, err)
	}
	switch code(err) {
	case sqlite3.SQLITE_BUSY, // another process held the lock past the busy timeout
		sqlite3.SQLITE_LOCKED,
		sqlite3.SQLITE_FULL: // the disk, or max_page_count, is full; freeing space helps
		return fmt.Errorf("sqlitestore: %s: %s: %w: %w", file, op, petstore.ErrUnavailable, err)
	}
	return fmt.Errorf("sqlitestore: %s: %s: %w", file, op, err)
}

// code returns the primary SQLite result code of err, or 0 when err does not
// come from SQLite.
func code(err error) int {
	var e *sqlite.Error
	if errors.As(err, &e) {
		return e.Code() & 0xff // extended codes carry the primary one in the low byte
	}
	return 0
}
