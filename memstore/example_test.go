package memstore_test

import (
	"context"
	"fmt"
	"time"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/memstore"
)

// A Store is ready to serve with petstore.WithStore, or to use on its own.
// This example adds a pet, replays it with its idempotency key, and lists
// the pets.
func Example() {
	s := memstore.New()
	ctx := petstore.WithPrincipal(context.Background(), "alice")
	rex := petstore.NewPet{Name: "Rex", CategoryID: 1, Status: petstore.StatusAvailable}
	for range 2 {
		p, replayed, err := s.Add(ctx, rex, petstore.AddOptions{IdempotencyKey: "order-17"})
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("pet %d %s, replayed %v\n", p.ID, p.Name, replayed)
	}
	if _, _, err := s.Add(ctx, petstore.NewPet{Name: "Tom", CategoryID: 2}, petstore.AddOptions{}); err != nil {
		fmt.Println(err)
		return
	}
	pets, err := s.List(ctx, petstore.ListOptions{Limit: 20})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, p := range pets {
		fmt.Printf("%d %s %q\n", p.ID, p.Name, p.Status)
	}
	// Output:
	// pet 1 Rex, replayed false
	// pet 1 Rex, replayed true
	// 1 Rex "available"
	// 2 Tom ""
}

// A key replays its pet for the retention, and is forgotten after it. The
// clock here is one that the example moves; a store without WithClock ages
// its keys by time.Now.
func ExampleWithClock() {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := memstore.New(memstore.WithKeyRetention(48*time.Hour), memstore.WithClock(func() time.Time { return now }))
	ctx := petstore.WithPrincipal(context.Background(), "alice")
	rex := petstore.NewPet{Name: "Rex", CategoryID: 1}
	add := func() {
		p, replayed, err := s.Add(ctx, rex, petstore.AddOptions{IdempotencyKey: "order-17"})
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("after %v: pet %d, replayed %v, %d keys forgotten\n", now.Sub(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)), p.ID, replayed, s.PrunedKeys())
	}
	add()
	now = now.Add(47 * time.Hour)
	add()
	now = now.Add(2 * time.Hour)
	add()
	// Output:
	// after 0s: pet 1, replayed false, 0 keys forgotten
	// after 47h0m0s: pet 1, replayed true, 0 keys forgotten
	// after 49h0m0s: pet 2, replayed false, 1 keys forgotten
}
