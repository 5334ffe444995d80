package petstore

import "context"

// A Store keeps pets. The handler calls it for every operation; memstore and
// pgstore implement it, and petstoretest.TestStore checks that any
// implementation keeps this contract.
//
// IDs: Add assigns each pet an ID that is positive and unique within the
// store, and never reuses it. IDs need not be consecutive, but they grow in
// the order in which pets become visible: once Get or List has returned a
// pet, no pet with a smaller ID appears later. Pagination by ID relies on
// this to visit every pet exactly once while pets are being added.
//
// Values: Add stores and returns the pet exactly as given (every field, any
// valid UTF-8 name) together with its ID, and the pet is visible to Get and
// // List as soon as Add has returned; Get and List return the same values.
// Returned values never alias stored ones, so a caller may keep or change
// them.
//
// Validation: for a NewPet that NewPet.Validate rejects, Add stores nothing
// and returns an error wrapping ErrInvalidPet. The handler validates every
// pet before it calls Add, so this guards stores used directly.
//
// Get returns an error wrapping ErrNotFound for an ID that no pet has,
// including IDs that are zero or negative.
//
// List returns the pets with ID greater than ListOptions.After, in ascending
// order of ID, at most ListOptions.Limit of them (0 means no cap) and, when
// ListOptions.Status is set, only those with that status; a pet without a
// status is never returned under a filter. An empty result is an empty or
// nil slice and no error.
//
// Errors: an error wrapping ErrUnavailable means "try again later" and gives
// 503; any other error gives 500, and its text is logged, never sent to the
// client. When ctx is done, a method returns promptly with an error wrapping
// ctx.Err(), and a write that reports this error may or may not have
// happened.
//
// Concurrency: a Store is safe for concurrent use by multiple goroutines.
//
// The handler calls a Store through these three methods and no others: it
// looks for no optional method. A host that wraps a store by embedding it
// and overriding a method, to hide another tenant's pets from List say, is
// served through its override.
type Store interface {
	// Add stores p under a new ID and returns it as stored.
	Add(ctx context.Context, p NewPet) (Pet, error)
	// Get returns the pet with the given ID.
	Get(ctx context.Context, id int64) (Pet, error)
	// List returns the pets that opts selects, ascending by ID.
	List(ctx context.Context, opts ListOptions) ([]Pet, error)
}
