package petstore_test

import (
	"context"
	"fmt"
	"log"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/memstore"
)

// The handler needs a store and an authenticator; here an in-memory store
// and a fixed API key.
func ExampleNew() {
	h, err := petstore.New(
		petstore.WithStore(memstore.New()),
		petstore.WithAuthenticator(petstore.APIKeys("secret-key")),
	)
	if err != nil {
		log.Fatal(err)
	}

	r := httptest.NewRequest("POST", "/v1/pets", strings.NewReader(`{"name":"Rex","categoryId":1,"status":"available"}`))
	r.Header.Set("Authorization", "Bearer secret-key")
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)

	fmt.Println(w.Code, w.Header().Get("Location"))
	fmt.Println(w.Body)
	// Output:
	// 201 pets/1
	// {"id":1,"name":"Rex","categoryId":1,"status":"available"}
}

// An AuthenticatorFunc can check keys any way it likes and pass the caller's
// identity on to the store in the context, with WithPrincipal. Here
// "reader" may only read.
func ExampleAuthenticatorFunc() {
	auth := petstore.AuthenticatorFunc(func(ctx context.Context, op petstore.Operation, token string) (context.Context, error) {
		switch {
		case token == "writer":
		case token == "reader" && op != petstore.OpCreatePet:
		case token == "reader":
			return nil, petstore.ErrForbidden
		default:
			return nil, petstore.ErrUnauthorized
		}
		return petstore.WithPrincipal(ctx, "user-"+token), nil
	})
	h, err := petstore.New(petstore.WithStore(memstore.New()), petstore.WithAuthenticator(auth))
	if err != nil {
		log.Fatal(err)
	}

	for _, token := range []string{"writer", "reader", "stranger"} {
		r := httptest.NewRequest("POST", "/v1/pets", strings.NewReader(`{"name":"Rex","categoryId":1}`))
		r.Header.Set("Authorization", "Bearer "+token)
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		fmt.Println(token, w.Code)
	}
	// Output:
	// writer 201
	// reader 403
	// stranger 401
}

// A host serves the API beside its own routes by mounting the handler at
// the base path.
func ExampleWithBasePath() {
	api, err := petstore.New(
		petstore.WithStore(memstore.New()),
		petstore.WithAuthenticator(petstore.APIKeys("secret-key")),
		petstore.WithBasePath("/api/animals/v1"),
	)
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/api/animals/v1/", api)
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "ok") })

	r := httptest.NewRequest("GET", "/api/animals/v1/pets", nil)
	r.Header.Set("Authorization", "Bearer secret-key")
	w := httptest.NewRecorder()
	mux.ServeHTTP(w, r)
	fmt.Println(w.Code, w.Body)
	// Output:
	// 200 []
}

// An observer sees every request once it is answered: here it counts the
// answers by route and status, and who still calls the deprecated getPet.
func ExampleWithObserver() {
	var mu sync.Mutex
	counts := map[string]int{}
	deprecatedCalls := map[string]int{}
	h, err := petstore.New(
		petstore.WithStore(memstore.New()),
		petstore.WithAuthenticator(petstore.APIKeys("secret-key")),
		petstore.WithObserver(func(_ context.Context, o petstore.Observation) {
			mu.Lock()
			defer mu.Unlock()
			counts[fmt.Sprintf("%s %s %d", o.Method, o.Route, o.Status)]++
			if o.Deprecated && o.Principal != "" {
				deprecatedCalls[o.Principal]++
			}
		}),
	)
	if err != nil {
		log.Fatal(err)
	}
	for _, target := range []string{"/v1/pets", "/v1/pets/1", "/v1/pets/2", "/v1/pets?limit=0"} {
		r := httptest.NewRequest("GET", target, nil)
		r.Header.Set("Authorization", "Bearer secret-key")
		h.ServeHTTP(httptest.NewRecorder(), r)
	}
	for _, k := range slices.Sorted(maps.Keys(counts)) {
		fmt.Println(k, counts[k])
	}
	fmt.Println(len(deprecatedCalls), "caller of getPet")
	// Output:
	// GET /v1/pets 200 1
	// GET /v1/pets 400 1
	// GET /v1/pets/{petId} 404 2
	// 1 caller of getPet
}
