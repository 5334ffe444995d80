package client_test

import (
	"context"
	"fmt"
	"log"
	"net/http/httptest"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/client"
	"github.com/petstore-go/petstore/memstore"
)

func ExampleClient_Add_idempotencyKey() {
	h, err := petstore.New(petstore.WithStore(memstore.New()), petstore.WithAuthenticator(petstore.APIKeys("secret-key")))
	if err != nil {
		log.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	c, err := client.New(srv.URL+"/v1", client.WithAPIKey("secret-key"))
	if err != nil {
		log.Fatal(err)
	}

	// An order system creates the pet of order 1017 with a key of its own,
	// so that creating it again after a crash returns the same pet.
	ctx := context.Background()
	opts := petstore.AddOptions{IdempotencyKey: "order-1017"}
	p := petstore.NewPet{Name: "Rex", CategoryID: 1}
	for range 2 {
		pet, replayed, err := c.Add(ctx, p, opts)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(pet.ID, pet.Name, replayed)
	}
	// Output:
	// 1 Rex false
	// 1 Rex true
}
