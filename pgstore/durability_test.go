package pgstore_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/internal/testkit/pgtest"
	"github.com/petstore-go/petstore/petstoretest"
	"github.com/petstore-go/petstore/pgstore"
)

// TestDurability runs the durability suite on pgstore: each set of data is
// a schema of its own, and each open is a new pool on it, closed by close.
func TestDurability(t *testing.T) {
	admin := pgPool(t)
	petstoretest.TestDurability(t, func(t *testing.T) petstoretest.OpenFunc {
		schema := pgSchema(t, admin)
		return func(t *testing.T) (petstore.Store, func() error) {
			pool, err := pgxpool.New(context.Background(), pgtest.URL(t))
			if err != nil {
				t.Fatal(err)
			}
			s, err := pgstore.New(pool, pgstore.WithSchema(schema))
			if err != nil {
				pool.Close()
				t.Fatal(err)
			}
			if err := s.Migrate(t.Context()); err != nil {
				pool.Close()
				t.Fatal(err)
			}
			return s, func() error {
				pool.Close() // waits for the connections in use to come back
				return nil
			}
		}
	})
}
