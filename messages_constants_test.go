package petstore_test

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/httpapi"
)

// TestMessagesNameTheConstants: a message that names a limit or the
// statuses takes them from the Go constants and petstore.Statuses, so that
// changing one changes what clients are told.
func TestMessagesNameTheConstants(t *testing.T) {
	var quoted []string
	for _, st := range petstore.Statuses() {
		quoted = append(quoted, strconv.Quote(string(st)))
	}
	tooLong := `{"name":"` + strings.Repeat("a", petstore.MaxNameLength+1) + `","categoryId":1}`
	tests := []struct {
		name, method, target, body string
		header                     http.Header
		want                       []string // what the message contains
	}{
		{"limit too large", http.MethodGet, "/v1/pets?limit=" + strconv.Itoa(petstore.MaxPageSize+1), "", nil,
			[]string{"limit must be an integer from 1 to " + strconv.Itoa(petstore.MaxPageSize)}},
		{"unknown status in the query", http.MethodGet, "/v1/pets?status=lost", "", nil, quoted},
		{"unknown status in the body", http.MethodPost, "/v1/pets", `{"name":"Rex","categoryId":1,"status":"lost"}`, nil, quoted},
		{"status of another type", http.MethodPost, "/v1/pets", `{"name":"Rex","categoryId":1,"status":1}`, nil, quoted},
		{"name too long", http.MethodPost, "/v1/pets", tooLong, nil,
			[]string{"longer than " + strconv.Itoa(petstore.MaxNameLength) + " characters"}},
		{"Idempotency-Key too long", http.MethodPost, "/v1/pets", `{"name":"Rex","categoryId":1}`,
			http.Header{"Idempotency-Key": {strings.Repeat("k", petstore.MaxIdempotencyKeyLength+1)}},
			[]string{"1 to " + strconv.Itoa(petstore.MaxIdempotencyKeyLength) + " characters"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newEnv(t)
			w := env.serve(newRequest(t, tt.method, tt.target, tt.body, tt.header))
			checkResponse(t, w)
			got := decode[httpapi.Error](t, w)
			for _, want := range tt.want {
				if !strings.Contains(got.Message, want) {
					t.Errorf("message %q does not contain %q", got.Message, want)
				}
			}
		})
	}
	err := petstore.NewPet{Name: "Rex", CategoryID: 1, Status: "lost"}.Validate()
	for _, want := range quoted {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate of an unknown status: %v, want an error naming %s", err, want)
		}
	}
}

// TestStatuses checks that Statuses lists exactly the statuses that are
// Valid, the three constants, and that changing its result changes nothing.
func TestStatuses(t *testing.T) {
	got := petstore.Statuses()
	want := []petstore.Status{petstore.StatusAvailable, petstore.StatusPending, petstore.StatusSold}
	if !slices.Equal(got, want) {
		t.Fatalf("Statuses() = %q, want %q", got, want)
	}
	for _, st := range append(want, "", "lost", "Available", "available ") {
		if st.Valid() != slices.Contains(got, st) {
			t.Errorf("%q.Valid() = %v", st, st.Valid())
		}
	}
	got[0] = "lost"
	if petstore.Statuses()[0] != petstore.StatusAvailable || petstore.Status("lost").Valid() {
		t.Errorf("changing the result of Statuses changed the statuses")
	}
}
