package memstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/petstoretest"
)

// TestSimpleStoreConformance runs the Store conformance suite on the
// example's simpleStore, so that the store a newcomer reads first is proven
// to keep the contract, not only shown.
func TestSimpleStoreConformance(t *testing.T) {
	petstoretest.TestStore(t, func(*testing.T) petstore.Store { return &simpleStore{} })
}

// TestSimpleStoreKeyRetention checks what the conformance suite cannot wait
// for: simpleStore keeps a key for petstore.MinKeyRetention after the Add
// that stored it, and forgets it after that, map and queue alike.
func TestSimpleStoreKeyRetention(t *testing.T) {
	rex := petstore.NewPet{Name: "Rex", CategoryID: 1}
	for _, tc := range []struct {
		name       string
		later      time.Duration // from the first Add to the retry
		wantID     int64
		wantReplay bool
		wantHeld   int // keys held after the retry
	}{
		{"within the retention", time.Hour, 1, true, 1},
		{"at its end", petstore.MinKeyRetention, 1, true, 1},
		{"after it", petstore.MinKeyRetention + time.Nanosecond, 2, false, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			s := &simpleStore{now: func() time.Time { return now }}
			ctx := petstore.WithPrincipal(context.Background(), "alice")
			opts := petstore.AddOptions{IdempotencyKey: "order-17"}
			if _, _, err := s.Add(ctx, rex, opts); err != nil {
				t.Fatal(err)
			}
			now = now.Add(tc.later)
			p, replayed, err := s.Add(ctx, rex, opts)
			if err != nil {
				t.Fatal(err)
			}
			type result struct {
				ID       int64
				Replayed bool
				Held     int
				Queued   int
			}
			want := result{tc.wantID, tc.wantReplay, tc.wantHeld, tc.wantHeld}
			got := result{p.ID, replayed, len(s.keys), len(s.queue)}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("retry %v after the first Add (-want +got):\n%s", tc.later, diff)
			}
		})
	}
}
