package memstore_test

import (
	"context"
	"errors"
	"runtime"
	"strings"
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

// TestManyChunks checks Get and List over pets in full chunks of the store,
// whose names it keeps in one string, and in the chunk that is filling,
// whose names it copies out: names of every length from 1 to 30 bytes,
// pages that cross from one chunk to the next, and filters.
func TestManyChunks(t *testing.T) {
	s := memstore.New()
	ctx := context.Background()
	statuses := []petstore.Status{"", petstore.StatusAvailable, petstore.StatusPending, petstore.StatusSold}
	var want []petstore.Pet
	for i := range 2600 { // two full chunks of 1,024 and part of a third
		name := strings.Repeat(string(rune('a'+i%26)), i%30+1)
		p, _, err := s.Add(ctx, petstore.NewPet{Name: name, CategoryID: int64(i + 1), Status: statuses[i%4]}, petstore.AddOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, p)
	}
	for _, w := range want {
		if got, err := s.Get(ctx, w.ID); err != nil || got != w {
			t.Fatalf("Get(%d) = %+v, %v; want %+v", w.ID, got, err, w)
		}
	}
	for _, st := range statuses {
		var listed []petstore.Pet
		for after := int64(0); ; {
			page, err := s.List(ctx, petstore.ListOptions{Status: st, After: after, Limit: 99})
			if err != nil {
				t.Fatal(err)
			}
			if len(page) == 0 {
				break
			}
			listed = append(listed, page...)
			after = page[len(page)-1].ID
		}
		var wanted []petstore.Pet
		for _, p := range want {
			if st == "" || p.Status == st {
				wanted = append(wanted, p)
			}
		}
		if diff := cmp.Diff(wanted, listed); diff != "" {
			t.Errorf("pages of List(status %q) (-want +got):\n%s", st, diff)
		}
	}
}
