package pgstore_test

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/internal/loadtest"
)

// TestLoad has 64 concurrent clients make 100,000 creates, mixed with lists
// and gets, through a real server on loopback onto a Store in a fresh
// schema, then checks that every acknowledged pet is stored exactly once
// with the fields it was created with, and nothing else is.
// PETSTORE_LOAD_CREATES changes the number of creates.
func TestLoad(t *testing.T) {
	const key = "load-key"
	pool := pgPool(t, func(c *pgxpool.Config) { c.MaxConns = 16 })
	store := pgStore(t, pool)
	h, err := petstore.New(
		petstore.WithStore(store),
		petstore.WithAuthenticator(petstore.APIKeys(key)),
	)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()

	bound := loadtest.Bound(t)
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	c := loadtest.Config{
		BaseURL: srv.URL + petstore.DefaultBasePath,
		APIKey:  key,
		Clients: 64,
		Creates: loadtest.Creates(t),
	}
	r := loadtest.Run(ctx, t, c)
	t.Logf("pgstore (table %s, pool of %d), %d clients, bound %v: %v", store.Table(), pool.Config().MaxConns, c.Clients, bound.Round(1e9), r)
	if r.Created != c.Creates || r.Verified != c.Creates {
		t.Errorf("%d creates: %d acknowledged, %d verified; want all of them", c.Creates, r.Created, r.Verified)
	}
}
