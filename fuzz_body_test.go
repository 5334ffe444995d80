package petstore_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/httpapi"
)

// fuzzMaxBody is the body limit of the body fuzzer's handler: small, so that
// the fuzzer reaches 413 too.
const fuzzMaxBody = 1024

// FuzzCreateBody sends arbitrary bodies to POST /v1/pets. Every answer is
// 201, 400 invalid_body or 413 payload_too_large with a well-formed body; a
// rejected body leaves the store as it was; an accepted body is stored as
// exactly the pet that encoding/json decodes from it; and a body that is the
// canonical encoding of a valid pet is accepted.
func FuzzCreateBody(f *testing.F) {
	f.Add([]byte(`{"name":"Rex","categoryId":1}`))
	f.Add([]byte(`{"name":"Rex","categoryId":1,"status":"sold"}`))
	f.Add([]byte(`{"name":"Rex","categoryId":1,"name":"Max"}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		env := newEnv(t, petstore.WithMaxBodyBytes(fuzzMaxBody))
		before := snapshot(t, env.store)

		w := env.serve(newRequest(t, http.MethodPost, "/v1/pets", string(body), http.Header{"Content-Type": {"application/json"}}))
		code := checkResponse(t, w)

		// A body that encoding/json writes for a valid pet must be accepted.
		var decoded petstore.NewPet
		decodeErr := json.Unmarshal(body, &decoded)
		canonical := decodeErr == nil && decoded.Validate() == nil && marshal(t, decoded) == string(body)

		switch {
		case len(body) > fuzzMaxBody:
			if w.Code != http.StatusRequestEntityTooLarge || code != httpapi.CodePayloadTooLarge {
				t.Fatalf("%d-byte body over the %d-byte limit: status %d %s, want 413 payload_too_large", len(body), fuzzMaxBody, w.Code, w.Body)
			}
			checkUnchanged(t, env.store, before)
		case w.Code == http.StatusBadRequest && code == httpapi.CodeInvalidBody:
			if canonical {
				t.Fatalf("canonical body of a valid pet rejected: %s", w.Body)
			}
			checkUnchanged(t, env.store, before)
		case w.Code == http.StatusCreated:
			if decodeErr != nil {
				t.Fatalf("accepted a body that encoding/json rejects (%v)", decodeErr)
			}
			if err := decoded.Validate(); err != nil {
				t.Fatalf("accepted a pet that is not valid: %v", err)
			}
			want := petstore.Pet{ID: int64(len(before) + 1), NewPet: decoded}
			if diff := cmp.Diff(append(before, want), snapshot(t, env.store)); diff != "" {
				t.Fatalf("store after an accepted create (-want +got):\n%s", diff)
			}
			if got, wantBody := w.Body.String(), marshal(t, want); got != wantBody {
				t.Fatalf("response body %s, want %s", got, wantBody)
			}
			if got, wantLoc := w.Header().Get("Location"), "pets/"+strconv.FormatInt(want.ID, 10); got != wantLoc {
				t.Fatalf("Location = %q, want %q", got, wantLoc)
			}
		default:
			t.Fatalf("status %d %s; want 201, 400 invalid_body or 413", w.Code, w.Body)
		}
	})
}
