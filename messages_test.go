package petstore_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/httpapi"
)

// TestMessagesNameBasePath: a message that names a path names it under the
// handler's base path, as a client must send it.
func TestMessagesNameBasePath(t *testing.T) {
	tests := []struct {
		base, target string
		want         httpapi.Error
	}{
		{"/v1", "/v1/pets/99", httpapi.Error{Code: httpapi.CodeNotFound, Status: 404,
			Message: "no pet has ID 99; list pets with GET /v1/pets"}},
		{"/api/v2", "/api/v2/pets/99", httpapi.Error{Code: httpapi.CodeNotFound, Status: 404,
			Message: "no pet has ID 99; list pets with GET /api/v2/pets"}},
		{"", "/pets/99", httpapi.Error{Code: httpapi.CodeNotFound, Status: 404,
			Message: "no pet has ID 99; list pets with GET /pets"}},
		{"/api/v2", "/api/v2/orders", httpapi.Error{Code: httpapi.CodeNotFound, Status: 404,
			Message: "no such path; the API serves /api/v2/pets and /api/v2/pets/{petId}"}},
	}
	for _, tt := range tests {
		t.Run(tt.target, func(t *testing.T) {
			env := newEnv(t, petstore.WithBasePath(tt.base))
			w := env.serve(newRequest(t, http.MethodGet, tt.target, "", nil))
			checkResponse(t, w)
			var got httpapi.Error
			if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("error body (-want +got):\n%s", diff)
			}
		})
	}
}
