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
// # What it does not trust
//
// A Client sends its requests, and the API key, to the base URL's origin
// only: its scheme, host and port. It follows a redirect, or a Link to the
// next page, within that origin, and refuses any other with an error
// wrapping ErrRedirectRefused that names the origin refused: another port
// of the same host, another host, and https to plain http above all. This
// holds with an http.Client of WithHTTPClient too, which New copies rather
// than changes. (net/http alone keeps Authorization on a redirect to the
// same host name whatever the port or scheme.)
//
// It checks what it is sent. Add checks that the pet answered is the pet
// sent, with the same name, category and status, and a positive ID; Get,
// that it is the pet of the ID asked for; All and List, that a page holds
// no more pets than asked for, each with a positive ID, a name within
// petstore.MaxNameLength and, when the listing asks for a status, that
// status. It reads at most 64 KiB of a pet or an error answer and 64 KiB
// plus 4 KiB a pet of a page (464 KiB for a page of 100), where the
// largest pet the API allows takes about 3.2 KB. An answer that fails a check
// gives an error wrapping ErrBadResponse that says what was wrong, with long
// values cut, and is not retried.
//
// It bounds what a server can make it hold or wait for. All holds one page
// at a time, however many pages follow. List without a Limit collects at
// most DefaultMaxListPets pets (10,000; WithMaxListPets changes it), and
// past that returns an error wrapping ErrTooManyPets rather than fill the
// memory; use All to read more. Each request, from sending it to reading
// the whole answer, has DefaultTimeout, 30 s, set by WithTimeout (0 for
// none), applied through the request's context, so that a server that
// answers a byte at a time cannot hold a call for ever.
//
// A Client is safe for concurrent use by multiple goroutines.
package client
