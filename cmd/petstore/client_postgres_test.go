package main

import (
	"context"
	"strings"
	"testing"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/client"
	"github.com/petstore-go/petstore/petstoretest"
)

// TestPostgresClientStore runs the Store conformance suite through the Go
// client against cmd/petstore as a process on PostgreSQL: a new process on a
// new schema for each clause. It proves the client, the handler, the
// server's wiring and pgstore together.
//
// The suite scopes idempotency keys by the principal of its contexts
// (petstore.WithPrincipal). Over HTTP the server knows a caller only by its
// API key, so the client sends the key of each context's principal: the
// server runs with one key per principal, and APIKeys authenticates each
// key as a principal of its own.
func TestPostgresClientStore(t *testing.T) {
	postgresServerURL(t)
	bin := buildServer(t)
	// The principals that the suite uses, "" for contexts without one.
	keys := map[string]string{
		"":      "client-suite-key",
		"alice": "client-suite-alice",
		"bob":   "client-suite-bob",
		"carol": "client-suite-carol",
	}
	var all []string
	for _, k := range keys {
		all = append(all, k)
	}
	keyOf := func(ctx context.Context) string {
		k, ok := keys[petstore.Principal(ctx)]
		if !ok {
			t.Errorf("the suite uses the principal %q, which the test has no key for", petstore.Principal(ctx))
		}
		return k
	}
	petstoretest.TestStore(t, func(t *testing.T) petstore.Store {
		_, serverURL := postgresSchema(t)
		p := startServer(t, bin, strings.Join(all, ","), []string{postgresURLVar + "=" + serverURL})
		c, err := client.New(p.baseURL, client.WithAPIKeyFunc(keyOf), client.WithHTTPClient(postgresClient()))
		if err != nil {
			t.Fatal(err)
		}
		return c
	})
}
