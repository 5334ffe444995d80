package petstore_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/petstore-go/petstore"
)

func TestValidateReportsEveryProblem(t *testing.T) {
	status := "status must be " + statusList() + ", or empty"
	tests := []struct {
		pet  petstore.NewPet
		want []string
	}{
		{petstore.NewPet{Name: "Rex", CategoryID: 1}, nil},
		{petstore.NewPet{Name: "", CategoryID: 1}, []string{"name must not be blank"}},
		{petstore.NewPet{Name: "Rex", CategoryID: 0}, []string{"categoryId must be 1 or greater"}},
		{petstore.NewPet{Name: "Rex", CategoryID: 1, Status: "lost"}, []string{status}},
		{petstore.NewPet{Name: "\x00", CategoryID: -1, Status: "lost"}, []string{"name must not contain control characters",
			"categoryId must be 1 or greater", status}},
	}
	for _, tt := range tests {
		err := tt.pet.Validate()
		if tt.want == nil {
			if err != nil {
				t.Errorf("%+v: %v, want nil", tt.pet, err)
			}
			continue
		}
		if !errors.Is(err, petstore.ErrInvalidPet) || err.Error() != strings.Join(tt.want, "\n") {
			t.Errorf("%+v: %q, want ErrInvalidPet with %q", tt.pet, err, tt.want)
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
