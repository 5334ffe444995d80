package pgstore_test

import (
	"context"
	"log"
	"net/http"
	"os"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/pgstore"
)

// Example serves the API on PostgreSQL. It needs a database, so it is
// compiled but not run by go test.
func Example() {
	ctx := context.Background()
	// The pool is the application's: its size, timeouts and TLS settings
	// come from the URL, e.g. "postgres://app:secret@db:5432/shop?pool_max_conns=20".
	pool, err := pgxpool.New(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()

	store, err := pgstore.New(pool, pgstore.WithSchema("petstore"))
	if err != nil {
		log.Fatal(err)
	}
	// Safe to run on every start, from every instance at once.
	if err := store.Migrate(ctx); err != nil {
		log.Fatal(err)
	}

	api, err := petstore.New(
		petstore.WithStore(store),
		petstore.WithAuthenticator(petstore.APIKeys(os.Getenv("API_KEY"))),
	)
	if err != nil {
		log.Fatal(err)
	}
	log.Fatal(http.ListenAndServe(":8080", api))
}

// ExampleWithReplicas reads from a hot standby of the primary: Get and List
// go to it, while Add, and every read of a pet that the standby has yet to
// replay, go to the primary. It needs two servers, so it is compiled but
// not run by go test.
func ExampleWithReplicas() {
	ctx := context.Background()
	primary, err := pgxpool.New(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer primary.Close()
	standby, err := pgxpool.New(ctx, os.Getenv("STANDBY_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer standby.Close()

	store, err := pgstore.New(primary, pgstore.WithReplicas(standby))
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close() // stops the checks of the standby

	api, err := petstore.New(
		petstore.WithStore(store),
		petstore.WithAuthenticator(petstore.APIKeys(os.Getenv("API_KEY"))),
	)
	if err != nil {
		log.Fatal(err)
	}
	log.Fatal(http.ListenAndServe(":8080", api))
}
