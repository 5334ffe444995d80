// Package client calls the animal store API from Go. A *Client is a
// petstore.Store, so code written against that interface runs unchanged
// whether its pets are in memory, in a database or behind a server.
//
// Make a Client with the URL the API is served under, base path included,
// and the API key to send with every request:
//
//	c, err := client.New("https://pets.example.com/v1", client.WithAPIKey(key))
//	if err != nil {
//		return err
//	}
//
// WithAPIKeyFunc picks each call's key from its context instead, and
// WithHTTPClient sets the transport. Add creates a pet, Get reads one, and
// All reads a listing page by page:
//
//	pet, _, err := c.Add(ctx, petstore.NewPet{Name: "Rex", CategoryID: 1}, petstore.AddOptions{})
//	...
//	for pet, err := range c.All(ctx, petstore.ListOptions{Status: petstore.StatusAvailable}) {
//		if err != nil {
//			return err
//		}
//		fmt.Println(pet.Name)
//	}
//
// Watch goes on where All ends, yielding each pet as it is created.
//
// Errors wrap the library's sentinels, so errors.Is tells the cases apart
// as with any Store; an error answer is also an *Error, for errors.As. A
// Client retries 503 and 429 answers and transport failures (WithRetries,
// WithBackoff), and every create carries an Idempotency-Key, so a retried
// create never stores a pet twice. It sends the key only to the base URL's
// origin (ErrRedirectRefused), and checks what it reads (ErrBadResponse).
// docs/client.md says more.
package client
