package client_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http/httptest"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/client"
	"github.com/petstore-go/petstore/memstore"
)

func Example() {
	// A server to call: the handler on an in-memory store.
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
	ctx := context.Background()
	for _, p := range []petstore.NewPet{
		{Name: "Rex", CategoryID: 1, Status: petstore.StatusAvailable},
		{Name: "Tom", CategoryID: 2, Status: petstore.StatusSold},
		{Name: "Fifi", CategoryID: 1, Status: petstore.StatusAvailable},
	} {
		if _, _, err := c.Add(ctx, p, petstore.AddOptions{}); err != nil {
			log.Fatal(err)
		}
	}

	// All follows the pages to the end.
	for pet, err := range c.All(ctx, petstore.ListOptions{Status: petstore.StatusAvailable}) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(pet.ID, pet.Name)
	}

	// Errors wrap the library's sentinels and hold the server's answer.
	_, err = c.Get(ctx, 42)
	fmt.Println(errors.Is(err, petstore.ErrNotFound))
	var e *client.Error
	if errors.As(err, &e) {
		fmt.Println(e.Status, e.Code)
	}
	// Output:
	// 1 Rex
	// 3 Fifi
	// true
	// 404 not_found
}

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
