package petstore_test

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/internal/loadtest"
	"github.com/petstore-go/petstore/memstore"
)

// TestLoadMemstore has 64 concurrent clients make 100,000 creates, mixed
// with lists and gets, through a real server on loopback, then checks that
// every acknowledged pet is stored exactly once with the fields it was
// created with, and nothing else is. PETSTORE_LOAD_CREATES changes the
// number of creates.
func TestLoadMemstore(t *testing.T) {
	const key = "load-key"
	h, err := petstore.New(
		petstore.WithStore(memstore.New()),
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
	t.Logf("memstore, %d clients, bound %v: %v", c.Clients, bound.Round(1e9), r)
	if r.Created != c.Creates || r.Verified != c.Creates {
		t.Errorf("%d creates: %d acknowledged, %d verified; want all of them", c.Creates, r.Created, r.Verified)
	}
}
