// Command host is the library as a host would serve it at its simplest:
// petstore.New over memstore, one API key, in a bare http.Server with
// ordinary timeouts and nothing else. bench/load.sh (HOST=1) measures
// cmd/petstore against it, which is what the server adds to the library.
//
// Usage:
//
//	host -addr 127.0.0.1:18085 -key KEY
package main

import (
	"flag"
	"log"
	"net/http"
	"time"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/memstore"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:18085", "address to listen on")
	key := flag.String("key", "", "the API key")
	flag.Parse()
	h, err := petstore.New(petstore.WithStore(memstore.New()), petstore.WithAuthenticator(petstore.APIKeys(*key)))
	if err != nil {
		log.Fatal(err)
	}
	srv := &http.Server{
		Addr:              *addr,
		Handler:           h,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       2 * time.Minute,
	}
	log.Fatal(srv.ListenAndServe())
}
