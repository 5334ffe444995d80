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
// A program that calls the API for callers of its own passes
// WithAPIKeyFunc instead, to pick each call's key from its context.
// WithHTTPClient sets the transport (TLS, proxies); the other options tune
// retries, timeouts and the bound of List. A Client is safe for concurrent use.
//
// Add creates a pet, Get reads one, and All reads a listing page by page:
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
// Watch goes on where All ends: it yields each pet as it is created, and
// reconnects after a broken connection without missing or repeating one.
//
// All holds one page at a time. List collects a listing in a slice, at
// most WithMaxListPets pets when ListOptions.Limit is 0; past that it
// returns an error wrapping ErrTooManyPets.
//
// Errors wrap the library's sentinels, so errors.Is tells the cases apart
// as with any Store: petstore.ErrNotFound for an unknown ID,
// petstore.ErrUnavailable for an outage or an unreachable server, and so
// on. An error answer is also an *Error, with the answer's status, code and
// message, for errors.As.
//
// A Client retries what is safe to retry: 503 and 429 answers and transport
// failures, waiting as Retry-After asks or with jittered exponential
// backoff, never past the caller's context (WithRetries, WithBackoff); with
// WithWaitForBudget, it waits before a request that the server's RateLimit
// field says its budget would refuse, rather than after. Each
// request has a timeout of its own (WithTimeout). Every create carries an
// Idempotency-Key, AddOptions.IdempotencyKey or one that Add makes, so a
// retried create never stores a pet twice.
//
// A Client trusts the server with its pets, not with its key or its
// memory. It sends requests, and the key, only to the base URL's origin
// (scheme, host and port): a redirect elsewhere gives an error wrapping
// ErrRedirectRefused. It follows a Link to the next page only under the
// base URL, at its origin and below its path, and refuses any other the
// same way. It reads a bounded amount of each answer, and checks what it
// reads: a pet other than the one created or asked for, or a page with
// more pets than asked for or of another status, gives an error wrapping
// ErrBadResponse.
package client
