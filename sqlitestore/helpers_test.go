package sqlitestore_test

import (
	"path/filepath"
	"testing"

	"github.com/petstore-go/petstore/sqlitestore"
)

// newPath returns the path of a file, not yet created, in a new temporary
// directory.
func newPath(t *testing.T) string {
	t.Helper()
	return filepath.Join(t.TempDir(), "pets.db")
}

// open opens a Store on path and closes it when the test ends.
func open(t *testing.T, path string, opts ...sqlitestore.Option) *sqlitestore.Store {
	t.Helper()
	s, err := sqlitestore.Open(path, opts...)
	if err != nil {
		t.Fatalf("Open(%q): %v", path, err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}
