package redislimit_test

import (
	"log"
	"net/http"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/memstore"
	"github.com/petstore-go/petstore/redislimit"
	"github.com/redis/go-redis/v9"
)

// Instances that share one Redis give each caller its budget once.
func Example() {
	opts, err := redis.ParseURL("redis://127.0.0.1:6379/0")
	if err != nil {
		log.Fatal(err)
	}
	rdb := redislimit.NewClient(opts) // each call bounded by the Limiter's deadline, never retried
	h, err := petstore.New(
		petstore.WithStore(memstore.New()),
		petstore.WithAuthenticator(petstore.APIKeys("a-long-random-key")),
		petstore.WithRateLimit(petstore.RateLimit{
			Reads:   redislimit.New(rdb, "petstore:reads:", petstore.Rate{PerSecond: 100, Burst: 200}),
			Creates: redislimit.New(rdb, "petstore:creates:", petstore.Rate{PerSecond: 20, Burst: 40}),
		}),
	)
	if err != nil {
		log.Fatal(err)
	}
	log.Fatal(http.ListenAndServe("localhost:8080", h))
}
