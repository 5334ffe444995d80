package loadtest

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/petstore-go/petstore"
)

// TestStore makes the standard load on store, which must be empty: the
// handler on store, served by a real server on loopback, gets 64 clients
// making Creates(t) creates within Bound(t). It then checks that every
// create was acknowledged and verified, and logs the counts after name.
func TestStore(t *testing.T, name string, store petstore.Store) {
	t.Helper()
	const key = "load-key"
	h, err := petstore.New(petstore.WithStore(store), petstore.WithAuthenticator(petstore.APIKeys(key)))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()

	bound := Bound(t)
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	c := Config{
		BaseURL: srv.URL + petstore.DefaultBasePath,
		APIKey:  key,
		Clients: 64,
		Creates: Creates(t),
	}
	r := Run(ctx, t, c)
	t.Logf("%s, %d clients, bound %v: %v", name, c.Clients, bound.Round(1e9), r)
	if r.Created != c.Creates || r.Verified != c.Creates {
		t.Errorf("%d creates: %d acknowledged, %d verified; want all of them", c.Creates, r.Created, r.Verified)
	}
}
