package petstoretest

// Rules that helpers shared by several subtests check.
const (
	clauseCreate = "POST /pets answers 201 Created with the pet as stored, with a positive id, and a Location that resolves to the new pet; a pet created without a status has no status member."
	clauseList   = "GET /pets answers 200 with a JSON array of pets ascending by id, at most limit of them (20 by default), and a next Link, resolved against the request's URL, to the rest of the list."
)

// serverCases is the API as a client sees it, one rule per case.
var serverCases = []serverCase{
	// Authentication.
	{
		name:   "auth-missing",
		clause: `A request without an Authorization header is answered 401 unauthorized with WWW-Authenticate: Bearer realm="petstore" and no error.`,
		test:   httpAuthMissing,
	},
	{
		name:   "auth-wrong-scheme",
		clause: `A credential in a scheme other than Bearer is answered 401 unauthorized with WWW-Authenticate: Bearer realm="petstore" and no error.`,
		test:   httpAuthWrongScheme,
	},
	{
		name:   "auth-empty-token",
		clause: `Bearer with an empty token is answered 401 unauthorized with WWW-Authenticate: Bearer realm="petstore" and no error.`,
		test:   httpAuthEmptyToken,
	},
	{
		name:   "auth-bad-token",
		clause: `A token that the server rejects is answered 401 unauthorized with WWW-Authenticate: Bearer realm="petstore", error="invalid_token", and the body does not repeat the token.`,
		test:   httpAuthBadToken,
	},
	{
		name:   "auth-scheme-case",
		clause: "The scheme Bearer is matched without regard to case: bearer and BEARER work as Bearer does.",
		test:   httpAuthSchemeCase,
	},
	{
		name:   "auth-before-routing",
		clause: "A request without a valid key is answered 401 also on unknown paths and with other methods, so that it learns nothing about the routes.",
		test:   httpAuthBeforeRouting,
	},

	// Validation.
	{
		name:   "list-invalid-limit",
		clause: "GET /pets with a limit that is not an integer, is below 1 or above 100, or is given twice is answered 400 invalid_parameter.",
		test:   httpListInvalidLimit,
	},
	{
		name:   "list-invalid-status",
		clause: "GET /pets with a status other than available, pending and sold is answered 400 invalid_parameter.",
		test:   httpListInvalidStatus,
	},
	{
		name:   "list-invalid-cursor",
		clause: "GET /pets with a malformed cursor is answered 400 invalid_parameter.",
		test:   httpListInvalidCursor,
	},
	{
		name:   "list-unknown-params",
		clause: "Query parameters that the API specification does not define are ignored.",
		test:   httpListUnknownParams,
	},
	{
		name:   "get-invalid-id",
		clause: "GET /pets/{petId} with a petId that is not a base-10 int64 is answered 400 invalid_parameter.",
		test:   httpGetInvalidID,
	},
	{
		name:   "create-invalid-body",
		clause: "POST /pets with a body that is not one JSON object holding a valid name (1 to 256 characters of valid UTF-8, not blank, no control characters) and categoryId (1 or more), an optional valid status and nothing else is answered 400 invalid_body and creates no pet.",
		test:   httpCreateInvalidBody,
	},
	{
		name:   "create-unsupported-media-type",
		clause: "POST /pets with a Content-Type other than application/json (with or without parameters) is answered 415 unsupported_media_type with Accept-Post: application/json.",
		test:   httpCreateUnsupportedMediaType,
	},
	{
		name:   "create-too-large",
		clause: "POST /pets with a body over the size limit is answered 413 payload_too_large, whether or not it declares its length; a body of exactly the limit is read.",
		test:   httpCreateTooLarge,
	},

	// The operations.
	{
		name:   "create",
		clause: clauseCreate,
		test:   httpCreate,
	},
	{
		name:   "create-idempotent",
		clause: "POST /pets sent again with the same Idempotency-Key and the same pet answers 201 with the pet created first, the same Location and Idempotent-Replayed: true, and creates nothing.",
		test:   httpIdempotentReplay,
	},
	{
		name:   "create-idempotency-key-reused",
		clause: "POST /pets with an Idempotency-Key used before for another pet is answered 422 idempotency_key_reused.",
		test:   httpIdempotentReuse,
	},
	{
		name:   "create-idempotency-key-invalid",
		clause: "POST /pets with an Idempotency-Key that is not 1 to 255 visible ASCII characters is answered 400 invalid_parameter.",
		test:   httpIdempotencyKeyInvalid,
	},
	{
		name:   "get",
		clause: "GET /pets/{petId} answers 200 with the pet as it was created.",
		test:   httpGet,
	},
	{
		name:   "get-deprecation",
		clause: `GET /pets/{petId} carries Deprecation: @<unix seconds>, Sunset: an HTTP date not before the deprecation, and a Link with rel="successor-version" that resolves to the list of pets.`,
		test:   httpGetDeprecation,
	},
	{
		name:   "get-unknown",
		clause: "GET /pets/{petId} with a well-formed petId that no pet has is answered 404 not_found.",
		test:   httpGetUnknown,
	},
	{
		name:   "list-default-limit",
		clause: "GET /pets without a limit answers at most 20 pets, and exactly 20 with a next Link when more follow.",
		test:   httpListDefaultLimit,
	},
	{
		name:   "list-limit",
		clause: "GET /pets answers at most limit pets, and a next Link when more follow.",
		test:   httpListLimit,
	},
	{
		name:   "list-pagination",
		clause: `Following the Link with rel="next", resolved against the request's URL, visits every pet exactly once, in ascending order of id, with its fields as created; the last page has no next Link.`,
		test:   httpListPagination,
	},
	{
		name:   "list-pagination-while-adding",
		clause: "Paging through small pages visits every pet exactly once, in ascending order of id, also when pets are added between pages.",
		test:   httpListPaginationWhileAdding,
	},
	{
		name:   "list-status",
		clause: "GET /pets?status=S answers only pets with status S, and across its pages all of them, never a pet without a status; the next Link keeps the filter.",
		test:   httpListStatus,
	},

	// The protocol.
	{
		name:   "unknown-path",
		clause: "An unknown path under the base URL is answered 404 not_found, never with a redirect: paths are matched exactly, trailing slashes included.",
		test:   httpUnknownPath,
	},
	{
		name:   "method-not-allowed",
		clause: "A known path with another method is answered 405 method_not_allowed with an Allow header that lists the methods the path answers, as petstore.Allow gives them (GET, HEAD, POST on /pets).",
		test:   httpMethodNotAllowed,
	},
	{
		name:   "head",
		clause: "HEAD answers as GET does, with the same status and headers and no body.",
		test:   httpHead,
	},
}
