package wake_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petstore-go/petstore/internal/wake"
)

// A Set calls each function until its context ends, and runs the listener
// while any function is held.
func TestSet(t *testing.T) {
	var s wake.Set
	var a, b atomic.Int64
	listening := make(chan context.Context, 2)
	listen := func(ctx context.Context) { listening <- ctx }
	ctxA, cancelA := context.WithCancel(t.Context())
	ctxB, cancelB := context.WithCancel(t.Context())
	s.Add(ctxA, func() { a.Add(1) }, listen)
	s.Add(ctxB, func() { b.Add(1) }, listen)
	lctx := <-listening
	s.Wake()
	if a.Load() != 1 || b.Load() != 1 {
		t.Fatalf("after one Wake: calls %d and %d, want 1 and 1", a.Load(), b.Load())
	}
	cancelA()
	// Soon after A's end, a Wake calls B and no longer A.
	waitFor(t, func() bool { na, nb := a.Load(), b.Load(); s.Wake(); return a.Load() == na && b.Load() == nb+1 })
	if lctx.Err() != nil {
		t.Fatal("the listener ended while a function is held")
	}
	cancelB()
	<-lctx.Done()
	select {
	case <-listening:
		t.Fatal("a second listener started")
	default:
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
	}
}

// Added wakes once for each ID higher than any it woke for.
func TestAdded(t *testing.T) {
	var s wake.Set
	var n atomic.Int64
	s.Add(t.Context(), func() { n.Add(1) }, nil)
	for _, id := range []int64{3, 3, 2, 5, 4, 6} {
		s.Added(id)
	}
	if got := n.Load(); got != 3 {
		t.Errorf("woken %d times for IDs 3, 3, 2, 5, 4, 6; want 3 (for 3, 5 and 6)", got)
	}
}
