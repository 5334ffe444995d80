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
// its server URL set to the base path; that a default handler serves
// openapi.json of the source tree byte for byte; and that HEAD answers as
// GET without a body.
func TestOpenAPIServed(t *testing.T) {
	tests := []struct {
		name       string
		opts       []petstore.Option
		target     string
		wantServer string
	}{
		{"default", nil, "/v1/openapi.json", "/v1"},
		{"other base path", []petstore.Option{petstore.WithBasePath("/api/animals")}, "/api/animals/openapi.json", "/api/animals"},
		{"empty base path", []petstore.Option{petstore.WithBasePath("")}, "/openapi.json", "/"},
		{"explicitly on", []petstore.Option{petstore.WithOpenAPI(true)}, "/v1/openapi.json", "/v1"},
		{"last option wins", []petstore.Option{petstore.WithOpenAPI(false), petstore.WithOpenAPI(true)}, "/v1/openapi.json", "/v1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHandler(t, memstore.New(), tt.opts...)
			var want map[string]any
			if err := json.Unmarshal(openapiFile(t), &want); err != nil {
				t.Fatal(err)
			}
			want["servers"] = []any{map[string]any{"url": tt.wantServer}} // the only part that depends on the options
			for _, header := range []http.Header{nil, {"Authorization": {"Bearer " + testKey}}, {"Authorization": {"Bearer wrong"}}} {
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
				if diff := cmp.Diff(want, decode[map[string]any](t, w)); diff != "" {
					t.Errorf("GET %s: the document differs from openapi.json with servers %q (-want +got):\n%s", tt.target, tt.wantServer, diff)
				}
				if got, file := w.Body.String(), string(openapiFile(t)); tt.opts == nil && got != file {
					t.Errorf("the served document is not openapi.json byte for byte:\n%s", cmp.Diff(file, got))
				}
				head := openapiServe(h, http.MethodHead, tt.target, header)
				if diff := cmp.Diff(w.Header(), head.Header()); head.Code != http.StatusOK || head.Body.Len() != 0 || diff != "" {
					t.Errorf("HEAD %s: status %d with %d body bytes, headers (-get +head):\n%s", tt.target, head.Code, head.Body.Len(), diff)
				}
			}
		})
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
