package petstoretest

// storeCases is the Store contract, one clause per case, in the order of the
// doc comment of petstore.Store.
var storeCases = []storeCase{
	// IDs.
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
		name:   "ids-unique-concurrent",
		clause: "IDs are positive and unique also when 64 goroutines call Add at once, and every pet added is stored.",
		test:   testIDsUniqueConcurrent,
	},
	{
		name:   "ids-grow",
		clause: "Once Get or List has returned a pet, no pet with a smaller ID appears later.",
		test:   testIDsGrow,
	},

	// Values.
	{
		name:   "round-trip",
		clause: "Add stores and returns the pet exactly as given (every field, any valid UTF-8 name) together with its ID; Get and List return the same values.",
		test:   testRoundTrip,
	},
	{
		name:   "no-alias",
		clause: "Returned values never alias stored ones, so a caller may keep or change them.",
		test:   testNoAlias,
	},

	{
		name:   "add-invalid",
		clause: "For a NewPet that NewPet.Validate rejects, Add stores nothing and returns an error wrapping ErrInvalidPet.",
		test:   testAddInvalid,
	},

	// Get.
	{
		name:   "get-unknown",
		clause: "Get returns an error wrapping ErrNotFound for an ID that no pet has, including IDs that are zero or negative.",
		test:   testGetUnknown,
	},

	// List.
	{
		name:   "list-ascending",
		clause: "List returns the pets in ascending order of ID.",
		test:   testListAscending,
	},
	{
		name:   "list-limit",
		clause: "List returns at most ListOptions.Limit pets, the first ones of those selected.",
		test:   testListLimit,
	},
	{
		name:   "list-limit-zero",
		clause: "A ListOptions.Limit of 0 means no cap: List returns every pet selected.",
		test:   testListLimitZero,
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
		name:   "list-combined",
		clause: "Status, After and Limit apply together: List returns the first Limit pets with ID greater than After that have the status.",
		test:   testListCombined,
	},
	{
		name:   "list-empty",
		clause: "An empty result is an empty or nil slice and no error.",
		test:   testListEmpty,
	},

	// Pagination.
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
	{
		name:   "paginate-concurrent-adds",
		clause: "IDs grow in the order in which pets become visible, so paging visits every pet exactly once while other goroutines add pets.",
		test:   testPaginateConcurrentAdds,
	},

	// Errors and contexts.
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

	// Concurrency.
	{
		name:   "concurrent-use",
		clause: "A Store is safe for concurrent use by multiple goroutines: Add, Get and List may run at once (run under -race to catch a missing lock).",
		test:   testConcurrentUse,
	},
}
