package sqlitestore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/internal/sqlstore"
	"github.com/petstore-go/petstore/internal/testkit/sqltest"
	"github.com/petstore-go/petstore/sqlitestore"
)

// TestExportImport checks Export and Import as sqltest.CheckDump does.
func TestExportImport(t *testing.T) {
	sqltest.CheckDump(t, sqltest.Dump{
		Open: func(t *testing.T, now func() time.Time) sqltest.Store {
			return open(t, newPath(t), sqlitestore.WithClock(now))
		},
		ErrNotEmpty: sqlitestore.ErrNotEmpty, DupKey: "record 2 (pet 2)", OnTime: true,
	})
}

// TestNoIDLeft checks that a file that has issued the last ID there is
// answers a create with an error that no retry helps (which the handler
// answers 500, not 503), and that Check says so.
func TestNoIDLeft(t *testing.T) {
	path := newPath(t)
	s := open(t, path)
	if _, err := rawDB(t, path).Exec(`INSERT INTO pets (id, name, category_id) VALUES (9223372036854775807, 'last', 1)`); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"", "k"} { // a lone insert, and a transaction
		_, _, err := s.Add(context.Background(), petstore.NewPet{Name: "one more", CategoryID: 1}, petstore.AddOptions{IdempotencyKey: key})
		if !errors.Is(err, sqlstore.ErrNoIDLeft) || errors.Is(err, petstore.ErrUnavailable) {
			t.Errorf("Add with key %q: %v; want ErrNoIDLeft, not ErrUnavailable", key, err)
		}
	}
	if err := s.Check(context.Background()); !errors.Is(err, sqlstore.ErrNoIDLeft) || errors.Is(err, petstore.ErrUnavailable) {
		t.Errorf("Check: %v; want ErrNoIDLeft, not ErrUnavailable", err)
	}
}
