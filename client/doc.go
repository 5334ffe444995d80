// Package client calls the animal store API from Go. A *Client is itself a
// petstore.Store: code written against the Store interface works unchanged
// whether its pets live in memory, in PostgreSQL or behind an API served by
// petstore.New somewhere else.
//
// It does by itself what every client of the API has to do: it follows the
// Link headers from page to page, turns error answers into errors that wrap
// the library's sentinels (petstore.ErrNotFound, petstore.ErrUnavailable and
// the others) and carry the answer as an *Error, and retries what is safe to
// retry: 503 answers and transport failures, waiting as Retry-After asks,
// with exponential backoff and jitter otherwise, and never past the caller's
// context. A create is retried only under an Idempotency-Key, the caller's
// or one that Add makes for the call, so a lost response never creates a
// pet twice.
//
// Typical use:
//
//	c, err := client.New("https://pets.example.com/v1", client.WithAPIKey(key))
//	if err != nil {
//		return err
//	}
//	pet, _, err := c.Add(ctx, petstore.NewPet{Name: "Rex", CategoryID: 1}, petstore.AddOptions{})
//	...
//	for pet, err := range c.All(ctx, petstore.ListOptions{Status: petstore.StatusAvailable}) {
//		if err != nil {
//			return err
//		}
//		fmt.Println(pet.Name)
//	}
//
// A Client is safe for concurrent use by multiple goroutines.
package client
