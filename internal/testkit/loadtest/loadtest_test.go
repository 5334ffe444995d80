package loadtest_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/internal/testkit/loadtest"
	"github.com/petstore-go/petstore/memstore"
)

// brokenStore is a memstore with the bug that the name of a case of
// TestRunCatches describes; "correct" has none.
type brokenStore struct {
	*memstore.Store
	bug string
}

func (b brokenStore) Add(ctx context.Context, p petstore.NewPet, opts petstore.AddOptions) (petstore.Pet, bool, error) {
	if b.bug == "a pet is stored twice" && p.CategoryID == 3 {
		_, _, _ = b.Store.Add(ctx, p, opts)
	}
	return b.Store.Add(ctx, p, opts)
}

func (b brokenStore) Get(ctx context.Context, id int64) (petstore.Pet, error) {
	p, err := b.Store.Get(ctx, id)
	if b.bug == "get changes a name" && id == 5 {
		p.Name += "!"
	}
	return p, err
}

func (b brokenStore) List(ctx context.Context, o petstore.ListOptions) ([]petstore.Pet, error) {
	pets, err := b.Store.List(ctx, o)
	switch {
	case b.bug == "listing loses a pet":
		pets = slices.DeleteFunc(pets, func(p petstore.Pet) bool { return p.ID == 7 })
	case b.bug == "listing repeats a pet" && o.Status == "" && o.Limit == petstore.MaxPageSize+1 && len(pets) > 1:
		pets[1] = pets[0]
	}
	return pets, err
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
	tests := []struct {
		bug  string
		want string // in a reported failure; "" for none
	}{
		{"correct", ""},
		{"listing loses a pet", "is missing from the full listing"},
		{"get changes a name", "GET pets/5 answered"},
		{"a pet is stored twice", "whose create was not acknowledged"},
		{"listing repeats a pet", "follows pet"},
	}
	for _, tt := range tests {
		t.Run(tt.bug, func(t *testing.T) {
			h, err := petstore.New(petstore.WithStore(brokenStore{memstore.New(), tt.bug}), petstore.WithAuthenticator(petstore.APIKeys("k")))
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
