package petstore_test

import (
	"errors"
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
