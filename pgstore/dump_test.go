package pgstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/internal/sqlstore"
	"github.com/petstore-go/petstore/internal/testkit/sqltest"
	"github.com/petstore-go/petstore/pgstore"
)

// TestExportImport checks Export and Import as sqltest.CheckDump does.
func TestExportImport(t *testing.T) {
	pool := pgPool(t)
	sqltest.CheckDump(t, sqltest.Dump{
		Open: func(t *testing.T, now func() time.Time) sqltest.Store {
			return pgStore(t, pool, pgstore.WithClock(now))
		},
		ErrNotEmpty: pgstore.ErrNotEmpty, DupKey: "records 1 to 2",
	})
}

// TestNoIDLeft checks that a table that holds the last ID there is
// answers a create with an error that no retry helps, and that Check says
// so.
func TestNoIDLeft(t *testing.T) {
	pool := pgPool(t)
	ctx := context.Background()
	s := pgStore(t, pool)
	pgExec(t, pool, `INSERT INTO `+s.Table()+` (id, name, category_id) OVERRIDING SYSTEM VALUE VALUES (9223372036854775807, 'last', 1)`)
	if err := s.Check(ctx); !errors.Is(err, sqlstore.ErrNoIDLeft) || errors.Is(err, petstore.ErrUnavailable) {
		t.Errorf("Check: %v; want ErrNoIDLeft, not ErrUnavailable", err)
	}
	pgExec(t, pool, `SELECT setval(pg_get_serial_sequence($1, 'id'), 9223372036854775807)`, s.Table())
	for _, key := range []string{"", "k"} {
		_, _, err := s.Add(ctx, petstore.NewPet{Name: "one more", CategoryID: 1}, petstore.AddOptions{IdempotencyKey: key})
		if !errors.Is(err, sqlstore.ErrNoIDLeft) || errors.Is(err, petstore.ErrUnavailable) {
			t.Errorf("Add with key %q: %v; want ErrNoIDLeft, not ErrUnavailable", key, err)
		}
	}
}
