package loadtest_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/internal/testkit/loadtest"
	"github.com/petstore-go/petstore/memstore"
)

// brokenStore is a memstore whose Add, Get and List a case may change.
type brokenStore struct {
	*memstore.Store
	add  func(s *memstore.Store, ctx context.Context, p petstore.NewPet) (petstore.Pet, error)
	get  func(s *memstore.Store, ctx context.Context, id int64) (petstore.Pet, error)
	list func(s *memstore.Store, ctx context.Context, o petstore.ListOptions) ([]petstore.Pet, error)
}

var _ petstore.Store = brokenStore{}

func (b brokenStore) Add(ctx context.Context, p petstore.NewPet, opts petstore.AddOptions) (petstore.Pet, bool, error) {
	if b.add != nil {
		pet, err := b.add(b.Store, ctx, p)
		return pet, false, err
	}
	return b.Store.Add(ctx, p, opts)
}

func (b brokenStore) Get(ctx context.Context, id int64) (petstore.Pet, error) {
	if b.get != nil {
		return b.get(b.Store, ctx, id)
	}
	return b.Store.Get(ctx, id)
}

func (b brokenStore) List(ctx context.Context, o petstore.ListOptions) ([]petstore.Pet, error) {
	if b.list != nil {
		return b.list(b.Store, ctx, o)
	}
	return b.Store.List(ctx, o)
}

// recorder is a testing.TB that records failures instead of failing.
type recorder struct {
	testing.TB
	mu     sync.Mutex
	errors []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	runtime.Goexit()
}

func (r *recorder) FailNow() { runtime.Goexit() }

// TestRunCatches checks that Run reports a store that loses, changes,
// invents or repeats pets, and passes a correct one.
func TestRunCatches(t *testing.T) {
	dropSeven := func(s *memstore.Store, ctx context.Context, o petstore.ListOptions) ([]petstore.Pet, error) {
		pets, err := s.List(ctx, o)
		for i, p := range pets {
			if p.ID == 7 {
				return append(pets[:i:i], pets[i+1:]...), err
			}
		}
		return pets, err
	}
	tests := []struct {
		name  string
		store brokenStore
		want  string // in a reported failure; "" for none
	}{
		{"correct", brokenStore{}, ""},
		{"listing loses a pet", brokenStore{list: dropSeven}, "is missing from the full listing"},
		{"get changes a name", brokenStore{get: func(s *memstore.Store, ctx context.Context, id int64) (petstore.Pet, error) {
			p, err := s.Get(ctx, id)
			if id == 5 {
				p.Name += "!"
			}
			return p, err
		}}, "GET pets/5 answered"},
		{"a pet is stored twice", brokenStore{add: func(s *memstore.Store, ctx context.Context, p petstore.NewPet) (petstore.Pet, error) {
			if p.CategoryID == 3 {
				_, _, _ = s.Add(ctx, p, petstore.AddOptions{})
			}
			pet, _, err := s.Add(ctx, p, petstore.AddOptions{})
			return pet, err
		}}, "whose create was not acknowledged"},
		{"listing repeats a pet", brokenStore{list: func(s *memstore.Store, ctx context.Context, o petstore.ListOptions) ([]petstore.Pet, error) {
			pets, err := s.List(ctx, o)
			if o.Status == "" && o.Limit == petstore.MaxPageSize+1 && len(pets) > 1 {
				pets[1] = pets[0]
			}
			return pets, err
		}}, "follows pet"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.store.Store = memstore.New()
			h, err := petstore.New(petstore.WithStore(tt.store), petstore.WithAuthenticator(petstore.APIKeys("k")))
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(h)
			defer srv.Close()
			rec := &recorder{TB: t}
			done := make(chan struct{})
			go func() {
				defer close(done)
				loadtest.Run(t.Context(), rec, loadtest.Config{BaseURL: srv.URL + "/v1", APIKey: "k", Clients: 4, Creates: 300})
			}()
			<-done
			got := strings.Join(rec.errors, "\n")
			if tt.want == "" && got != "" {
				t.Errorf("Run reported failures for a correct store:\n%s", got)
			}
			if tt.want != "" && !strings.Contains(got, tt.want) {
				t.Errorf("Run reported %q; want a failure containing %q", got, tt.want)
			}
		})
	}
}
