package pgstore_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/client"
	"github.com/petstore-go/petstore/internal/testkit/pgtest"
	"github.com/petstore-go/petstore/internal/testkit/syncbuf"
)

// TestRestart stops the database under a running handler and starts it
// again: while it is down every request answers 503 unavailable with
// Retry-After, promptly; once it is back, the same handler on the same pool
// serves fully again, and the pets created before the outage are there.
// The database is a throwaway cluster of the test's own (see
// pgtest.NewCluster).
func TestRestart(t *testing.T) {
	cluster := pgtest.NewCluster(t)
	cluster.Start(t)
	store := pgMigrate(t, pgNew(t, urlPool(t, cluster.URL(), func(c *pgxpool.Config) { c.MaxConns = 4 })))
	const key = "restart-key"
	logs := &syncbuf.Buffer{}
	h, err := petstore.New(petstore.WithStore(store), petstore.WithAuthenticator(petstore.APIKeys(key)),
		petstore.WithLogger(slog.New(slog.NewTextHandler(logs, nil))))
	must(t, err)
	srv := httptest.NewServer(h)
	defer srv.Close()
	defer func() {
		if t.Failed() || testing.Verbose() {
			t.Logf("the handler's log:\n%s", logs)
		}
	}()
	newClient := func(opts ...client.Option) *client.Client {
		opts = append(opts, client.WithAPIKey(key), client.WithHTTPClient(&http.Client{Timeout: 10 * time.Second}))
		c, err := client.New(srv.URL+petstore.DefaultBasePath, opts...)
		must(t, err)
		return c
	}
	c, once := newClient(), newClient(client.WithRetries(0)) // once shows each answer
	ctx := context.Background()
	var pets []petstore.Pet
	create := func(p petstore.NewPet) {
		t.Helper()
		got, _, err := c.Add(ctx, p, petstore.AddOptions{})
		if err != nil || got.NewPet != p {
			t.Fatalf("create %+v = %+v, %v", p, got, err)
		}
		pets = append(pets, got)
		if all, err := c.List(ctx, petstore.ListOptions{}); err != nil || !cmp.Equal(all, pets) {
			t.Errorf("List = %+v, %v; want %+v", all, err, pets)
		}
	}
	// answer describes the answer that err, of a call of once, holds: 200
	// for no error, or the status, code and whether Retry-After was set.
	type answer struct {
		Status     int
		Code       string
		RetryAfter bool
	}
	answerOf := func(err error) answer {
		var e *client.Error
		switch {
		case err == nil:
			return answer{Status: http.StatusOK}
		case !errors.As(err, &e):
			t.Fatalf("no answer: %v", err)
		}
		return answer{e.Status, string(e.Code), e.RetryAfter > 0}
	}
	calls := map[string]func() error{
		"create": func() error {
			_, _, err := once.Add(ctx, petstore.NewPet{Name: "During", CategoryID: 9}, petstore.AddOptions{})
			return err
		},
		"list": func() error { _, err := once.List(ctx, petstore.ListOptions{}); return err },
		"get":  func() error { _, err := once.Get(ctx, pets[0].ID); return err },
	}

	create(petstore.NewPet{Name: "Before", CategoryID: 1, Status: petstore.StatusAvailable})
	create(petstore.NewPet{Name: "Vor dem Ausfall", CategoryID: 2})

	// The outage, several times over, so that both the pool's broken
	// connections and its failed attempts at new ones are met.
	cluster.Stop(t)
	unavailable := answer{Status: http.StatusServiceUnavailable, Code: "unavailable", RetryAfter: true}
	for round := range 3 {
		for name, call := range calls {
			start := time.Now()
			if diff := cmp.Diff(unavailable, answerOf(call())); diff != "" {
				t.Errorf("round %d, database down: %s answered (-want +got):\n%s", round, name, diff)
			}
			t.Logf("database down: %s answered in %v", name, time.Since(start).Round(time.Millisecond))
		}
	}

	// The recovery: the same handler and pool serve again within a bound;
	// meanwhile every answer is 200 or 503 unavailable.
	cluster.Start(t)
	deadline := time.Now().Add(30 * time.Second)
	for attempt := 1; ; attempt++ {
		got := answerOf(calls["list"]())
		if got.Status == http.StatusOK {
			t.Logf("database back: full service after %d attempts", attempt)
			break
		}
		if diff := cmp.Diff(unavailable, got); diff != "" {
			t.Fatalf("database back, attempt %d: list answered (-want +got):\n%s", attempt, diff)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the database is back, but after %d attempts in 30s the handler still answers 503", attempt)
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, p := range pets {
		if got, err := c.Get(ctx, p.ID); err != nil || got != p {
			t.Errorf("after the outage, Get(%d) = %+v, %v; it was created as %+v", p.ID, got, err, p)
		}
	}
	create(petstore.NewPet{Name: "After", CategoryID: 3, Status: petstore.StatusSold})
}
