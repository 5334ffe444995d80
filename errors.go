package petstore

import "errors"

// Errors that stores and authenticators return, wrapped or as they are, to
// tell the handler how to answer. Test for them with errors.Is.
var (
	// ErrNotFound means that no pet has the requested ID. The handler
	// answers 404 not_found.
	ErrNotFound = errors.New("petstore: pet not found")

	// ErrUnavailable means that the store cannot serve the request now but
	// may be able to later, for example because its database is down. The
	// handler answers 503 unavailable with a Retry-After header. It does
	// the same when reading a request's body fails with an error wrapping
	// ErrUnavailable, so that a host can bound the bodies read at once by
	// wrapping Request.Body: the handler reads a body only once the caller
	// is authenticated.
	ErrUnavailable = errors.New("petstore: store unavailable")

	// ErrUnauthorized means that the credential is not valid. The handler
	// answers 401 unauthorized with an invalid_token challenge.
	ErrUnauthorized = errors.New("petstore: unauthorized")

	// ErrInvalidPet means that a NewPet breaks a rule of NewPet.Validate.
	// Store.Add returns an error wrapping it for such a pet and stores
	// nothing; the handler answers 400 invalid_body.
	ErrInvalidPet = errors.New("petstore: invalid pet")

	// ErrIdempotencyKeyReused means that an idempotency key was used
	// before, by the same caller, for another pet. The handler answers 422
	// idempotency_key_reused.
	ErrIdempotencyKeyReused = errors.New("petstore: idempotency key reused for another pet")

	// ErrIdempotencyKeyInUse means that a create with the same idempotency
	// key, from the same caller, is still running. The handler answers 409
	// idempotency_key_in_use with Retry-After.
	ErrIdempotencyKeyInUse = errors.New("petstore: idempotency key in use")

	// ErrForbidden means that the credential is valid but may not perform
	// the operation. The handler answers 403 forbidden.
	ErrForbidden = errors.New("petstore: forbidden")
)
