package pgstore_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/petstoretest"
)

// TestStore runs the conformance suite, each subtest on a table of its own
// in a fresh schema.
func TestStore(t *testing.T) {
	pool := pgPool(t)
	petstoretest.TestStore(t, func(t *testing.T) petstore.Store {
		return pgStore(t, pool)
	})
}

// TestAppendList checks that AppendList appends what List returns after
// what dst already holds, for each kind of options.
func TestAppendList(t *testing.T) {
	ctx := context.Background()
	s := pgStore(t, pgPool(t))
	var added []petstore.Pet
	for i, status := range []petstore.Status{petstore.StatusSold, "", petstore.StatusSold, petstore.StatusPending, petstore.StatusSold} {
		p, err := s.Add(ctx, petstore.NewPet{Name: fmt.Sprintf("pet %d", i), CategoryID: int64(i + 1), Status: status})
		if err != nil {
			t.Fatal(err)
		}
		added = append(added, p)
	}
	held := petstore.Pet{ID: 99, NewPet: petstore.NewPet{Name: "held", CategoryID: 7}}
	for _, opts := range []petstore.ListOptions{
		{},
		{Limit: 2},
		{After: added[1].ID},
		{Status: petstore.StatusSold},
		{Status: petstore.StatusSold, Limit: 1, After: added[0].ID},
	} {
		t.Run(fmt.Sprintf("%+v", opts), func(t *testing.T) {
			want, err := s.List(ctx, opts)
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.AppendList(ctx, []petstore.Pet{held}, opts)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(append([]petstore.Pet{held}, want...), got); diff != "" {
				t.Errorf("AppendList (-want +got):\n%s", diff)
			}
		})
	}
}
