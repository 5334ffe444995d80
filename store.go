package petstore

import (
	"context"
	"time"
)

// A Store keeps pets. The handler calls it for every operation; memstore,
// sqlitestore, pgstore and client (a *client.Client, over HTTP) implement
// it, and petstoretest.TestStore checks that any implementation keeps this
// contract.
//
// IDs: Add assigns each pet an ID that is positive and unique within the
// store, and never reuses it. IDs need not be consecutive, but they grow in
// the order in which pets become visible: once Get or List has returned a
// pet, no pet with a smaller ID appears later. Pagination by ID relies on
// this to visit every pet exactly once while pets are being added.
//
// Values: Add stores and returns the pet exactly as given (every field, any
// valid UTF-8 name) together with its ID, and the pet is visible to Get and
// List as soon as Add has returned; Get and List return the same values.
// Returned values never alias stored ones, so a caller may keep or change
// them.
//
// Validation: for a NewPet that NewPet.Validate rejects, Add stores nothing
// and returns an error wrapping ErrInvalidPet. The handler validates every
// pet before it calls Add, so this guards stores used directly.
//
// Idempotent creates: when AddOptions.IdempotencyKey is set, Add stores at
// most one pet for that key and the caller's principal (Principal(ctx)):
//   - the first Add with the key stores the pet and returns it, replayed
//     false;
//   - a later Add with the same key and principal and an equal NewPet
//     stores nothing and returns the pet stored first, replayed true;
//   - one with the same key and principal and another NewPet stores nothing
//     and returns an error wrapping ErrIdempotencyKeyReused;
//   - while an Add with the key is still running, another with the same key
//     and principal either waits for it and then answers as above, or
//     returns an error wrapping ErrIdempotencyKeyInUse; it never stores a
//     second pet;
//   - the same key under another principal is another key.
//
// A store keeps a key at least MinKeyRetention (24 hours) after the Add
// that stored it, and may then forget it (the stores of this module do, in
// small steps that never hold up an Add). A key is stored with its pet
// atomically: an Add that returns an error has stored neither. A store that
// cannot keep keys does not keep this contract; it must not ignore the key.
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
// ctx.Err(); a write that reports such an error has stored nothing, unless
// the store cannot know (its database may have committed just before the
// connection broke).
//
// Concurrency: a Store is safe for concurrent use by multiple goroutines.
//
// Contexts: every call has a context of its own, which no other call
// shares: the context that the Authenticator returned, under the store
// deadline (WithStoreTimeout). A method may keep it (through
// context.WithoutCancel, to write an audit record after the call, say): its
// Principal is always its own caller's, and in a call from the handler
// never "" (see Authenticator).
//
// How Store grows: Store itself gains no method, which would break every
// Store outside this module. A new operation comes as a small optional
// interface (a Deleter, say) that New checks for once: when the store lacks
// it, the operation's route is absent, and petstoretest skips its clauses,
// as testing/fstest does for ReadDirFS. A wrapper that embeds the Store
// interface lacks it, so it fails closed. No optional interface replaces
// one of these three methods (a faster List, say), so a wrapper that
// overrides List, to hide another tenant's pets say, is always served
// through its override.
type Store interface {
	// Add stores p under a new ID and returns it as stored; replayed
	// reports an idempotent create answered with the pet that an earlier
	// Add with the same key stored.
	Add(ctx context.Context, p NewPet, opts AddOptions) (pet Pet, replayed bool, err error)
	// Get returns the pet with the given ID.
	Get(ctx context.Context, id int64) (Pet, error)
	// List returns the pets that opts selects, ascending by ID.
	List(ctx context.Context, opts ListOptions) ([]Pet, error)
}

// AddOptions are the options of one Store.Add.
type AddOptions struct {
	// IdempotencyKey, when not empty, makes the create idempotent for the
	// caller's principal (see Store). The handler takes it from the
	// Idempotency-Key header: 1 to MaxIdempotencyKeyLength visible ASCII
	// characters.
	IdempotencyKey string
}

// The limits of the API.
const (
	// MaxNameLength is the largest number of characters (runes) in a pet's
	// name that the handler accepts.
	MaxNameLength = 256
	// DefaultPageSize and MaxPageSize are the page sizes of GET /pets:
	// without a limit parameter, and the largest that one may ask for.
	DefaultPageSize = 20
	MaxPageSize     = 100
	// MaxIdempotencyKeyLength is the longest Idempotency-Key that the
	// handler accepts.
	MaxIdempotencyKeyLength = 255
	// MinKeyRetention is the shortest time a Store keeps an idempotency
	// key after the Add that stored it. A client that retries a create
	// within it gets the first answer again, never a second pet. Stores
	// that let the retention be configured refuse, or raise, anything
	// shorter.
	MinKeyRetention = 24 * time.Hour
)

// An AddNotifier is a Store that can tell when pets were added, by this
// process or by any other that shares its data, so that watch streams (see
// WithWatch) send them at once rather than at the next poll. New checks for
// it once; the handler of a Store without it, or of a wrapper that embeds
// the Store interface, polls.
//
// NotifyAdds arranges for wake to be called after pets were added, and
// returns at once; wake must return promptly and not call the Store. Its
// contract is loose on purpose:
//   - an Add through the Store wakes before it returns, so the handler
//     does not wake its streams itself;
//   - calls may coalesce: one wake may stand for any number of adds, and
//     calls may come for adds that the caller's List does not show;
//   - a wake may be lost (a connection broke, say), so the handler keeps
//     polling, more slowly, as a fallback;
//   - a wake carries no pets: List, by its After cursor, stays the one
//     truth of what was added, and a pet that a wake announced is visible
//     to List once wake is called (a store with replicas holds a read
//     until its replica has it, or reads the primary);
//   - when ctx is done, the calls of wake stop, soon after, and the Store
//     releases what it held for them (a connection, a poller) once no
//     caller is left. NotifyAdds itself never fails: a store that cannot
//     listen for a while keeps trying, and wakes once it can again.
type AddNotifier interface {
	NotifyAdds(ctx context.Context, wake func())
}
