package petstore_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/httpapi"
	"github.com/petstore-go/petstore/internal/wire"
	"github.com/petstore-go/petstore/memstore"
)

// openapiServe answers a request without a body, with header, from h.
func openapiServe(h http.Handler, method, target string, header http.Header) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, target, nil)
	for k, v := range header {
		r.Header[k] = v
	}
	return serve(h, r)
}

// openapiFile is the document as it is embedded, read from the source tree.
func openapiFile(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile("openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestOpenAPIServed checks that the document is served at {base}/openapi.json
// without authentication, with the JSON headers of every response, and with
// its server URL set to the base path.
func TestOpenAPIServed(t *testing.T) {
	tests := []struct {
		name       string
		opts       []petstore.Option
		target     string
		wantServer string
	}{
		{"default base path", nil, "/v1/openapi.json", "/v1"},
		{"other base path", []petstore.Option{petstore.WithBasePath("/api/animals")}, "/api/animals/openapi.json", "/api/animals"},
		{"empty base path", []petstore.Option{petstore.WithBasePath("")}, "/openapi.json", "/"},
		{"explicitly on", []petstore.Option{petstore.WithOpenAPI(true)}, "/v1/openapi.json", "/v1"},
		{"last option wins", []petstore.Option{petstore.WithOpenAPI(false), petstore.WithOpenAPI(true)}, "/v1/openapi.json", "/v1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHandler(t, memstore.New(), tt.opts...)
			for _, header := range []http.Header{
				nil,
				{"Authorization": {"Bearer " + testKey}},
				{"Authorization": {"Bearer wrong"}},
			} {
				w := openapiServe(h, http.MethodGet, tt.target, header)
				if w.Code != http.StatusOK {
					t.Fatalf("GET %s with %v: status %d, want 200; body %s", tt.target, header, w.Code, w.Body)
				}
				wantHeader := http.Header{
					"Content-Type":           {"application/json"},
					"Cache-Control":          {"no-store"},
					"X-Content-Type-Options": {"nosniff"},
					"Content-Length":         {strconv.Itoa(w.Body.Len())},
				}
				if diff := cmp.Diff(wantHeader, w.Header()); diff != "" {
					t.Errorf("GET %s: headers (-want +got):\n%s", tt.target, diff)
				}
				var want map[string]any
				if err := json.Unmarshal(openapiFile(t), &want); err != nil {
					t.Fatal(err)
				}
				want["servers"] = []any{map[string]any{"url": tt.wantServer}} // the only part that depends on the options
				if diff := cmp.Diff(want, decode[map[string]any](t, w)); diff != "" {
					t.Errorf("GET %s: the document differs from openapi.json with servers %q (-want +got):\n%s", tt.target, tt.wantServer, diff)
				}
			}
		})
	}
}

// TestOpenAPIDefaultIsTheFile checks that the default handler serves the
// embedded file byte for byte, so that openapi.json in the source tree is
// exactly what clients of a default handler read.
func TestOpenAPIDefaultIsTheFile(t *testing.T) {
	w := openapiServe(newHandler(t, memstore.New()), http.MethodGet, "/v1/openapi.json", nil)
	if got, want := w.Body.String(), string(openapiFile(t)); got != want {
		t.Errorf("the served document is not openapi.json byte for byte:\n%s", cmp.Diff(want, got))
	}
}

// TestOpenAPIMethods checks that HEAD answers as GET without a body and that
// any other method gets 405 with Allow, all without authentication.
func TestOpenAPIMethods(t *testing.T) {
	h := newHandler(t, memstore.New())
	get := openapiServe(h, http.MethodGet, "/v1/openapi.json", nil)
	head := openapiServe(h, http.MethodHead, "/v1/openapi.json", nil)
	if head.Code != http.StatusOK || head.Body.Len() != 0 {
		t.Errorf("HEAD: status %d with %d body bytes, want 200 without a body", head.Code, head.Body.Len())
	}
	if diff := cmp.Diff(get.Header(), head.Header()); diff != "" {
		t.Errorf("HEAD headers differ from GET's (-get +head):\n%s", diff)
	}
	for _, method := range []string{http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch, http.MethodOptions} {
		w := openapiServe(h, method, "/v1/openapi.json", nil)
		body := decode[httpapi.Error](t, w)
		got := []any{w.Code, w.Header().Get("Allow"), w.Header().Get("Www-Authenticate"), body.Code, body.Status}
		want := []any{405, wire.Allow(wire.OpenAPIPath), "", httpapi.CodeMethodNotAllowed, 405}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s /v1/openapi.json: status, Allow, WWW-Authenticate, code, body status (-want +got):\n%s", method, diff)
		}
	}
}

// TestOpenAPIOff checks that with WithOpenAPI(false) the document's path is
// like any unknown path: 401 without a key, 404 with one.
func TestOpenAPIOff(t *testing.T) {
	h := newHandler(t, memstore.New(), petstore.WithOpenAPI(false))
	tests := []struct {
		header     http.Header
		wantStatus int
		wantCode   httpapi.Code
	}{
		{nil, 401, httpapi.CodeUnauthorized},
		{http.Header{"Authorization": {"Bearer " + testKey}}, 404, httpapi.CodeNotFound},
	}
	for _, tt := range tests {
		w := openapiServe(h, http.MethodGet, "/v1/openapi.json", tt.header)
		body := decode[httpapi.Error](t, w)
		if diff := cmp.Diff([]any{tt.wantStatus, tt.wantCode}, []any{w.Code, body.Code}); diff != "" {
			t.Errorf("GET with %v: status and code (-want +got):\n%s", tt.header, diff)
		}
	}
}

// TestOpenAPIOnlyItsPath checks that only the exact path serves the
// document: neighbours of it are unknown paths, behind authentication.
func TestOpenAPIOnlyItsPath(t *testing.T) {
	h := newHandler(t, memstore.New())
	for _, target := range []string{"/openapi.json", "/v1/openapi.json/", "/v1/pets/openapi.json", "/v1/openapi.jsonx", "/v1/OpenAPI.json", "/v1/openapi%2Ejson"} {
		if w := openapiServe(h, http.MethodGet, target, nil); w.Code != http.StatusUnauthorized {
			t.Errorf("GET %s without a key: status %d, want 401", target, w.Code)
		}
	}
}

// TestOpenAPIMatchesGo checks the numbers and names that the document shares
// with the Go API, so that changing one without the other fails. Its
// operations are checked against the route table by
// TestOpenAPIMatchesRoutes, its error codes against httpapi's by
// TestREADMEWireTable.
func TestOpenAPIMatchesGo(t *testing.T) {
	var doc struct {
		Components struct {
			Parameters map[string]struct {
				Schema struct {
					Minimum, Maximum, Default int
				} `json:"schema"`
			} `json:"parameters"`
			Schemas map[string]struct {
				Enum       []string `json:"enum"`
				Properties map[string]struct {
					MaxLength int `json:"maxLength"`
				} `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(openapiFile(t), &doc); err != nil {
		t.Fatal(err)
	}
	limit := doc.Components.Parameters["limit"].Schema
	if diff := cmp.Diff([]int{1, petstore.MaxPageSize, petstore.DefaultPageSize}, []int{limit.Minimum, limit.Maximum, limit.Default}); diff != "" {
		t.Errorf("limit minimum, maximum, default (-want +got):\n%s", diff)
	}
	schemas := doc.Components.Schemas
	for _, s := range []string{"NewPet", "Pet"} {
		if got := schemas[s].Properties["name"].MaxLength; got != petstore.MaxNameLength {
			t.Errorf("%s.name maxLength = %d, want %d", s, got, petstore.MaxNameLength)
		}
	}
	var wantStatus []string
	for _, st := range petstore.Statuses() {
		wantStatus = append(wantStatus, string(st))
	}
	if diff := cmp.Diff(wantStatus, schemas["PetStatus"].Enum); diff != "" {
		t.Errorf("PetStatus enum (-want +got):\n%s", diff)
	}
	if alt := "(&status=(" + strings.Join(wantStatus, "|") + "))"; !strings.Contains(string(openapiFile(t)), alt) {
		t.Errorf("the pattern of the next Link does not list the statuses as %s", alt)
	}
}

// The handler serves its OpenAPI document without authentication, with the
// base path as its server URL.
func ExampleWithOpenAPI() {
	h, err := petstore.New(
		petstore.WithStore(memstore.New()),
		petstore.WithAuthenticator(petstore.APIKeys("secret")),
		petstore.WithBasePath("/api/v1"),
	)
	if err != nil {
		panic(err)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/api/v1/openapi.json", nil))
	var doc struct {
		Servers []struct{ URL string }
	}
	if err := json.Unmarshal(w.Body.Bytes(), &doc); err != nil {
		panic(err)
	}
	fmt.Println(w.Code, doc.Servers[0].URL)

	// With WithOpenAPI(false), the path is unknown and behind authentication.
	h, _ = petstore.New(
		petstore.WithStore(memstore.New()),
		petstore.WithAuthenticator(petstore.APIKeys("secret")),
		petstore.WithOpenAPI(false),
	)
	w = httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/v1/openapi.json", nil))
	fmt.Println(w.Code)
	// Output:
	// 200 /api/v1
	// 401
}
