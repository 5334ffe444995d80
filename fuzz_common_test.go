package petstore_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/httpapi"
	"github.com/petstore-go/petstore/memstore"
)

// Helpers shared by the fuzz targets and the hostile, fault and security
// tables: a handler on a seeded memstore and the checks that every response
// passes.

// fuzzKey is the API key that the fuzz and hostile handlers accept.
const fuzzKey = "fuzz-key-0123456789"

// fuzzSeedPets is how many pets a fresh fuzz store holds: more than a
// default page, so that listing without a limit has a next page.
const fuzzSeedPets = 30

// fuzzEnv is a handler on a memstore, seeded with fuzzSeedPets pets.
type fuzzEnv struct {
	h     http.Handler
	store *memstore.Store
}

// fuzzNewEnv returns a handler accepting fuzzKey on a fresh memstore holding
// fuzzSeedPets pets of every status and none, with extra options.
func fuzzNewEnv(tb testing.TB, opts ...petstore.Option) fuzzEnv {
	tb.Helper()
	store := memstore.New()
	statuses := []petstore.Status{petstore.StatusAvailable, petstore.StatusPending, petstore.StatusSold, ""}
	for i := range fuzzSeedPets {
		p := petstore.NewPet{Name: fmt.Sprintf("pet %d", i+1), CategoryID: int64(i%5 + 1), Status: statuses[i%len(statuses)]}
		if _, _, err := store.Add(context.Background(), p, petstore.AddOptions{}); err != nil {
			tb.Fatal(err)
		}
	}
	opts = append([]petstore.Option{petstore.WithStore(store), petstore.WithAuthenticator(petstore.APIKeys(fuzzKey))}, opts...)
	h, err := petstore.New(opts...)
	if err != nil {
		tb.Fatal(err)
	}
	return fuzzEnv{h: h, store: store}
}

// serve answers r and returns the recorded response.
func (e fuzzEnv) serve(r *http.Request) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	e.h.ServeHTTP(w, r)
	return w
}

// fuzzSnapshot returns every pet in store, checking that Len agrees.
func fuzzSnapshot(tb testing.TB, store *memstore.Store) []petstore.Pet {
	tb.Helper()
	pets, err := store.List(context.Background(), petstore.ListOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	if store.Len() != len(pets) {
		tb.Fatalf("store.Len() = %d, but List returned %d pets", store.Len(), len(pets))
	}
	return pets
}

// fuzzCheckUnchanged fails unless store holds exactly the pets of before.
func fuzzCheckUnchanged(tb testing.TB, store *memstore.Store, before []petstore.Pet) {
	tb.Helper()
	if diff := cmp.Diff(before, fuzzSnapshot(tb, store)); diff != "" {
		tb.Fatalf("store changed by a rejected request (-before +after):\n%s", diff)
	}
}

// fuzzCodes lists every documented error code.
func fuzzCodes() []httpapi.Code {
	return []httpapi.Code{
		httpapi.CodeInvalidParameter, httpapi.CodeInvalidBody, httpapi.CodeUnauthorized,
		httpapi.CodeForbidden, httpapi.CodeNotFound, httpapi.CodeMethodNotAllowed,
		httpapi.CodePayloadTooLarge, httpapi.CodeUnsupportedMediaType, httpapi.CodeInternal,
		httpapi.CodeUnavailable,
	}
}

// fuzzCheckResponse checks what every response carries: the JSON headers
// and, for a status of 400 or more, a well-formed error body
// {code, message, status} and nothing else, with a documented code that goes
// with the HTTP status and a message. It returns the error body's code, or
// "" for a success.
func fuzzCheckResponse(tb testing.TB, w *httptest.ResponseRecorder) httpapi.Code {
	tb.Helper()
	for k, want := range map[string]string{
		"Content-Type":           "application/json",
		"Cache-Control":          "no-store",
		"X-Content-Type-Options": "nosniff",
	} {
		if got := w.Header().Values(k); len(got) != 1 || got[0] != want {
			tb.Fatalf("header %s = %q, want %q", k, got, want)
		}
	}
	if got, want := w.Header().Get("Content-Length"), fmt.Sprint(w.Body.Len()); got != want {
		tb.Fatalf("Content-Length = %q, but the body has %s bytes", got, want)
	}
	if w.Code < 400 {
		if !json.Valid(w.Body.Bytes()) {
			tb.Fatalf("status %d with a body that is not JSON: %q", w.Code, w.Body)
		}
		return ""
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(w.Body.Bytes(), &members); err != nil {
		tb.Fatalf("status %d: error body %q is not a JSON object: %v", w.Code, w.Body, err)
	}
	var keys []string
	for k := range members {
		keys = append(keys, k)
	}
	if len(members) != 3 || members["code"] == nil || members["message"] == nil || members["status"] == nil {
		tb.Fatalf("status %d: error body %s has members %q, want exactly code, message and status", w.Code, w.Body, keys)
	}
	var e httpapi.Error
	d := json.NewDecoder(bytes.NewReader(w.Body.Bytes()))
	d.DisallowUnknownFields()
	if err := d.Decode(&e); err != nil {
		tb.Fatalf("status %d: error body %s: %v", w.Code, w.Body, err)
	}
	if e.Status != w.Code {
		tb.Fatalf("error body %s: status member %d, HTTP status %d", w.Body, e.Status, w.Code)
	}
	known := false
	for _, c := range fuzzCodes() {
		known = known || c == e.Code
	}
	if !known {
		tb.Fatalf("error body %s: code %q is not documented", w.Body, e.Code)
	}
	if e.Code.Status() != w.Code {
		tb.Fatalf("error body %s: code %q goes with status %d, not %d", w.Body, e.Code, e.Code.Status(), w.Code)
	}
	if e.Message == "" {
		tb.Fatalf("error body %s: empty message", w.Body)
	}
	return e.Code
}

// fuzzMarshal returns v as encoding/json encodes it.
func fuzzMarshal(tb testing.TB, v any) string {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}
