package pgstore_test

import (
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/petstore-go/petstore/internal/loadtest"
)

// TestLoad has 64 concurrent clients make 100,000 creates, mixed with lists
// and gets, through a real server on loopback onto a Store in a fresh
// schema, then checks that every acknowledged pet is stored exactly once
// with the fields it was created with, and nothing else is.
// PETSTORE_LOAD_CREATES changes the number of creates.
func TestLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping the 100,000-create load test in -short mode; run go test without -short for it")
	}
	pool := pgPool(t, func(c *pgxpool.Config) { c.MaxConns = 16 })
	store := pgStore(t, pool)
	loadtest.TestStore(t, fmt.Sprintf("pgstore (table %s, pool of %d)", store.Table(), pool.Config().MaxConns), store)
}
