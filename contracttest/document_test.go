package contracttest_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/go-cmp/cmp"
	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/contracttest"
	"github.com/petstore-go/petstore/internal/wire"
	"github.com/petstore-go/petstore/memstore"
)

// contractDocument returns the document that h serves at docURL, fetched
// without authentication.
func contractDocument(t *testing.T, h http.Handler, docPath string) []byte {
	t.Helper()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, docPath, nil))
	if w.Code != http.StatusOK {
		t.Fatalf("GET %s: status %d, want 200; %s", docPath, w.Code, w.Body)
	}
	return w.Body.Bytes()
}

// contractValidator returns the handler on store that contractHandler
// makes, and a Validator of the document it serves at /v1.
func contractValidator(t *testing.T, store petstore.Store) (http.Handler, *contracttest.Validator) {
	t.Helper()
	h := contractHandler(t, store)
	v, err := contracttest.New(contractDocument(t, h, "/v1"+wire.OpenAPIPath))
	if err != nil {
		t.Fatal(err)
	}
	return h, v
}

// TestDocumentValid checks that the document that the handler serves is a
// valid OpenAPI 3.0.3 document under every kind of base path, that its
// server is the base path, and that its operations are found there.
func TestDocumentValid(t *testing.T) {
	tests := []struct {
		base, wantServer string
	}{
		{petstore.DefaultBasePath, "/v1"},
		{"", "/"},
		{"/api/animals/v1", "/api/animals/v1"},
	}
	for _, tt := range tests {
		t.Run(tt.wantServer, func(t *testing.T) {
			raw := contractDocument(t, contractHandler(t, memstore.New(), petstore.WithBasePath(tt.base)), tt.base+wire.OpenAPIPath)
			doc, err := openapi3.NewLoader().LoadFromData(raw)
			if err != nil {
				t.Fatalf("loading: %v", err)
			}
			if err := contracttest.Validate(doc); err != nil {
				t.Fatal(err)
			}
			if len(doc.Servers) != 1 || doc.Servers[0].URL != tt.wantServer {
				servers, _ := json.Marshal(doc.Servers)
				t.Errorf("servers %s, want one, %s", servers, tt.wantServer)
			}
			if doc.OpenAPI != "3.0.3" {
				t.Errorf("openapi = %q, want 3.0.3", doc.OpenAPI)
			}
			v, err := contracttest.New(raw)
			if err != nil {
				t.Fatal(err)
			}
			var ops []string
			for _, o := range v.Documented() {
				ops = append(ops, o.Operation)
			}
			ops = slices.Compact(ops)
			want := []string{contracttest.OtherMethod, contracttest.OtherPath}
			for _, r := range wire.Routes() {
				want = append(want, string(r.Operation))
			}
			slices.Sort(want)
			if diff := cmp.Diff(want, ops); diff != "" {
				t.Errorf("documented operations (-want +got):\n%s", diff)
			}
		})
	}
}

// TestMissingListsUnexercised checks the coverage bookkeeping: an outcome
// that was seen is no longer missing, and every other documented one is.
func TestMissingListsUnexercised(t *testing.T) {
	h, v := contractValidator(t, memstore.New())
	if diff := cmp.Diff(v.Documented(), v.Missing()); diff != "" {
		t.Errorf("before any request, Missing differs from Documented (-documented +missing):\n%s", diff)
	}
	for _, target := range []string{"/v1/pets", "/v1/pets", "/v1/pets/1"} {
		req := httptest.NewRequest(http.MethodGet, target, nil)
		req.Header.Set("Authorization", "Bearer "+contractKey)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if err := v.Check(req, nil, w.Code, w.Header(), w.Body.Bytes()); err != nil {
			t.Fatal(err)
		}
	}
	seen := []contracttest.Outcome{{Operation: "listPets", Status: 200}, {Operation: "getPet", Status: 404}}
	want := slices.DeleteFunc(v.Documented(), func(o contracttest.Outcome) bool { return o == seen[0] || o == seen[1] })
	if diff := cmp.Diff(want, v.Missing()); diff != "" {
		t.Errorf("Missing (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[contracttest.Outcome]int{seen[0]: 2, seen[1]: 1}, v.Seen()); diff != "" {
		t.Errorf("Seen (-want +got):\n%s", diff)
	}
	wantDocumented := 2 // other method and path
	for _, n := range documentStatuses(t, contractDocument(t, h, "/v1"+wire.OpenAPIPath)) {
		wantDocumented += n
	}
	if got := len(v.Documented()); got != wantDocumented {
		t.Errorf("%d documented outcomes, want %d: %v", got, wantDocumented, v.Documented())
	}
}

// documentStatuses returns how many statuses each operation of the
// document lists, read with encoding/json rather than kin-openapi.
func documentStatuses(t *testing.T, document []byte) map[string]int {
	t.Helper()
	var doc struct {
		Paths map[string]map[string]struct {
			OperationID string                     `json:"operationId"`
			Responses   map[string]json.RawMessage `json:"responses"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(document, &doc); err != nil {
		t.Fatal(err)
	}
	n := map[string]int{}
	for _, methods := range doc.Paths {
		for _, op := range methods {
			n[op.OperationID] = len(op.Responses)
		}
	}
	if len(n) != len(wire.Routes()) {
		t.Fatalf("the document has the operations %v, the route table %v", n, wire.Routes())
	}
	return n
}
