package memstore_test

import (
	"context"
	"errors"
	"runtime"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/memstore"
	"github.com/petstore-go/petstore/petstoretest"
)

// TestStoreConformance runs the Store conformance suite on memstore.
func TestStoreConformance(t *testing.T) {
	petstoretest.TestStore(t, func(*testing.T) petstore.Store { return memstore.New() })
}

func TestZeroValueIsReady(t *testing.T) {
	var s memstore.Store
	ctx := context.Background()
	if _, err := s.Get(ctx, 1); !errors.Is(err, petstore.ErrNotFound) {
		t.Errorf("Get on the zero Store: %v, want ErrNotFound", err)
	}
	p, _, err := s.Add(ctx, petstore.NewPet{Name: "Rex", CategoryID: 1}, petstore.AddOptions{})
	if err != nil || p.ID != 1 {
		t.Fatalf("Add on the zero Store = %v, %v; want ID 1", p, err)
	}
	pets, err := s.List(ctx, petstore.ListOptions{})
	if diff := cmp.Diff([]petstore.Pet{p}, pets); err != nil || diff != "" {
		t.Errorf("List (-want +got):\n%s%v", diff, err)
	}
	if s.Len() != 1 {
		t.Errorf("Len = %d, want 1", s.Len())
	}
}

// TestAddAllocatesOnlyThePet checks that storing a pet costs no allocation
// of its own beyond the amortised growth of the slices that hold it: fewer
// than one allocation per 100 pets added.
func TestAddAllocatesOnlyThePet(t *testing.T) {
	s := memstore.New()
	ctx := context.Background()
	p := petstore.NewPet{Name: "Rex", CategoryID: 1, Status: petstore.StatusSold}
	const runs = 100_000
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range runs {
		if _, _, err := s.Add(ctx, p, petstore.AddOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	allocs := float64(after.Mallocs-before.Mallocs) / runs
	t.Logf("%.5f allocations per pet added", allocs)
	if allocs >= 0.01 {
		t.Errorf("Add allocates %.4f times per pet, want < 0.01 (amortised growth only)", allocs)
	}
}

// TestListLargestAfter checks the edge of the ID range: After at the largest
// int64 selects nothing, also under a filter.
func TestListLargestAfter(t *testing.T) {
	s := memstore.New()
	ctx := context.Background()
	if _, _, err := s.Add(ctx, petstore.NewPet{Name: "Rex", CategoryID: 1, Status: petstore.StatusSold}, petstore.AddOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, st := range []petstore.Status{"", petstore.StatusSold} {
		pets, err := s.List(ctx, petstore.ListOptions{Status: st, After: 1<<63 - 1})
		if err != nil || len(pets) != 0 {
			t.Errorf("List(status %q, After max) = %v, %v; want nothing", st, pets, err)
		}
		pets, err = s.List(ctx, petstore.ListOptions{Status: st, After: -1 << 63})
		if err != nil || len(pets) != 1 {
			t.Errorf("List(status %q, After min) = %v, %v; want the pet", st, pets, err)
		}
	}
}
