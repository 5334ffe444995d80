// Package petstore serves the animal store HTTP/JSON API (list pets, add a
// pet, get a pet by ID, bearer-key authentication) as an http.Handler that a
// host mounts under its own router, on a Store and behind an Authenticator
// that the host chooses.
//
// A host needs a Store (memstore.New keeps pets in memory, sqlitestore in a
// SQLite file, pgstore in PostgreSQL) and an Authenticator (APIKeys accepts
// a fixed set of keys):
//
//	store := memstore.New()
//	h, err := petstore.New(
//		petstore.WithStore(store),
//		petstore.WithAuthenticator(petstore.APIKeys(os.Getenv("API_KEY"))),
//		petstore.WithLogger(slog.Default()),
//	)
//	if err != nil {
//		log.Fatal(err) // every configuration mistake is reported here
//	}
//	http.Handle("/v1/", h) // serves /v1/pets and /v1/pets/{petId}
//
// The handler answers exactly the API specification's three operations
// below the base path (WithBasePath, "/v1" by default), and the OpenAPI
// document of the API at /openapi.json below it. Every error has the body
// of package httpapi's Error: {"code", "message", "status", "type", "title"}, with
// "errors" added when there are several problems to report; its codes are
// stable.
//
// Package petstoretest checks that any Store keeps the contract of the Store
// interface, and that any running server answers as the API specification
// says.
package petstore
