package petstoretest

// storeCases is the Store contract, one clause per case, the simplest
// first: a case comes after every case that it needs, so that the first
// failure TestStore shows is the one to fix first.
var storeCases = []storeCase{
	// Adding and listing: the clauses that every other test relies on.
	{
		name:   "ids-positive",
		clause: "Add assigns each pet an ID that is positive.",
		test:   testIDsPositive,
	},
	{
		name:   "ids-unique",
		clause: "Add assigns each pet an ID that is unique within the store.",
		test:   testIDsUnique,
	},
	{
		name:   "list-ascending",
		clause: "List returns the pets in ascending order of ID.",
		test:   testListAscending,
	},
	{
		name:   "round-trip",
		clause: "Add stores and returns the pet exactly as given (every field, any valid UTF-8 name) together with its ID; Get and List return the same values.",
		test:   testRoundTrip,
	},

	// Get, validation and aliasing.
	{
		name:   "get-unknown",
		clause: "Get returns an error wrapping ErrNotFound for an ID that no pet has, including IDs that are zero or negative.",
		test:   testGetUnknown,
	},
	{
		name:   "add-invalid",
		clause: "For a NewPet that NewPet.Validate rejects, Add stores nothing and returns an error wrapping ErrInvalidPet.",
		test:   testAddInvalid,
	},
	{
		name:   "idempotent-replay",
		clause: "With AddOptions.IdempotencyKey, a second Add of an equal NewPet by the same principal stores nothing and returns the pet stored first, replayed; an invalid pet does not use a key up.",
		test:   testIdempotentReplay,
	},
	{
		name:   "idempotent-reuse",
		clause: "An idempotency key sent again by the same principal with another NewPet stores nothing and gives an error wrapping ErrIdempotencyKeyReused.",
		test:   testIdempotentReuse,
	},
	{
		name:   "idempotent-scope",
		clause: "The same idempotency key under another principal (petstore.Principal of the context) is another key.",
		test:   testIdempotentScope,
	},
	{
		name:   "no-alias",
		clause: "Returned values never alias stored ones, so a caller may keep or change them.",
		test:   testNoAlias,
	},

	// Selecting with ListOptions.
	{
		name:   "list-limit",
		clause: "List returns at most ListOptions.Limit pets, the first ones of those selected.",
		test:   testListLimit,
	},
	{
		name:   "list-after",
		clause: "List returns the pets with ID greater than ListOptions.After, and no others.",
		test:   testListAfter,
	},
	{
		name:   "list-status",
		clause: "When ListOptions.Status is set, List returns only the pets with that status, and all of them.",
		test:   testListStatus,
	},
	{
		name:   "list-status-none",
		clause: "A pet without a status is never returned under a filter.",
		test:   testListStatusNone,
	},
	{
		name:   "list-limit-zero",
		clause: "A ListOptions.Limit of 0 means no cap: List returns every pet selected.",
		test:   testListLimitZero,
	},
	{
		name:   "list-combined",
		clause: "Status, After and Limit apply together: List returns the first Limit pets with ID greater than After that have the status.",
		test:   testListCombined,
	},
	{
		name:   "list-empty",
		clause: "An empty result is an empty or nil slice and no error.",
		test:   testListEmpty,
	},

	// Contexts.
	{
		name:   "add-canceled",
		clause: "When ctx is done, Add returns an error wrapping ctx.Err().",
		test:   testAddCanceled,
	},
	{
		name:   "get-canceled",
		clause: "When ctx is done, Get returns an error wrapping ctx.Err().",
		test:   testGetCanceled,
	},
	{
		name:   "list-canceled",
		clause: "When ctx is done, List returns an error wrapping ctx.Err().",
		test:   testListCanceled,
	},
	{
		name:   "deadline-exceeded",
		clause: "When ctx's deadline has passed, every method returns an error wrapping context.DeadlineExceeded.",
		test:   testDeadlineExceeded,
	},

	// IDs over time and pagination.
	{
		name:   "ids-grow",
		clause: "Once Get or List has returned a pet, no pet with a smaller ID appears later.",
		test:   testIDsGrow,
	},
	{
		name:   "paginate",
		clause: "Paging through List, with After set to the last ID of the previous page, visits every pet exactly once.",
		test:   testPaginate,
	},
	{
		name:   "paginate-while-adding",
		clause: "Paging through List visits every pet exactly once also when pets are added between pages.",
		test:   testPaginateWhileAdding,
	},

	// Concurrency.
	{
		name:   "ids-unique-concurrent",
		clause: "IDs are positive and unique also when 64 goroutines call Add at once, and every pet added is stored.",
		test:   testIDsUniqueConcurrent,
	},
	{
		name:   "idempotent-concurrent",
		clause: "Adds at once with one idempotency key and principal store one pet; each returns it or an error wrapping ErrIdempotencyKeyInUse.",
		test:   testIdempotentConcurrent,
	},
	{
		name:   "paginate-concurrent-adds",
		clause: "IDs grow in the order in which pets become visible, so paging visits every pet exactly once while other goroutines add pets.",
		test:   testPaginateConcurrentAdds,
	},
	{
		name:   "concurrent-use",
		clause: "A Store is safe for concurrent use by multiple goroutines: Add, Get and List may run at once (run under -race to catch a missing lock).",
		test:   testConcurrentUse,
	},
}
