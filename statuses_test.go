package petstore_test

import (
	"slices"
	"testing"

	"github.com/petstore-go/petstore"
)

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
