package sqlstore_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/petstore-go/petstore/internal/sqlstore"
)

// A call is one call of a fake store's Add, named by n.
type call struct {
	sqlstore.Call
	n int
}

// A fakeQueue writes batches to a log, each batch held until the test
// releases it.
type fakeQueue struct {
	q       sqlstore.Queue[*call]
	mu      sync.Mutex
	batches [][]int        // the calls of each batch written, in order
	hold    chan struct{}  // a batch waits for a value on it
	early   func(int) bool // called by Write before it waits, when set
}

func newFakeQueue(max int) *fakeQueue {
	f := &fakeQueue{hold: make(chan struct{})}
	f.q.Max = max
	f.q.Write = func(batch []*call) bool {
		var ns []int
		for _, c := range batch {
			ns = append(ns, c.n)
		}
		f.mu.Lock()
		f.batches = append(f.batches, ns)
		f.mu.Unlock()
		next := true
		if f.early != nil {
			next = !f.early(len(batch))
		}
		<-f.hold
		return next
	}
	return f
}

// send calls Send in a goroutine and returns a channel for its result.
func (f *fakeQueue) send(ctx context.Context, n int) <-chan error {
	out := make(chan error, 1)
	go func() { out <- f.q.Send(ctx, &call{n: n}) }()
	return out
}

// await waits until a batch is in flight and n calls wait in the queue,
// and fails the test after 10s.
func (f *fakeQueue) await(t *testing.T, n int) {
	t.Helper()
	for range 1000 {
		if got, busy := f.q.Waiting(); busy && got == n {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("waited 10s for %d calls in the queue", n)
}

// written returns the calls of the batches written so far.
func (f *fakeQueue) written() [][]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.batches)
}

// releaseAll lets every batch, now and later, end.
func (f *fakeQueue) releaseAll() { close(f.hold) }

// ended is a context that has ended although its Done channel does not
// say so, as a context does that ends once take has taken its call.
type ended struct{ context.Context }

func (ended) Err() error { return context.Canceled }

// TestQueueBatches checks that a lone call is written at once, alone,
// that the calls arriving meanwhile are written in batches of at most Max,
// in the order they came, that a call leaving the queue, or taken after
// its context ended, is not written, and that Close refuses later calls.
func TestQueueBatches(t *testing.T) {
	f := newFakeQueue(3)
	ctx := context.Background()
	lead := f.send(ctx, 0)
	f.await(t, 0)
	leaving, cancel := context.WithCancel(ctx)
	defer cancel()
	var results []<-chan error
	for n := 1; n <= 7; n++ {
		c := ctx
		switch n {
		case 2:
			c = leaving
		case 4:
			c = ended{ctx}
		}
		results = append(results, f.send(c, n))
		f.await(t, n)
	}
	cancel()
	if err := <-results[1]; !errors.Is(err, context.Canceled) {
		t.Fatalf("Send of a call cancelled in the queue: %v; want context.Canceled", err)
	}
	f.await(t, 6)
	f.releaseAll()
	for n, r := range append(results, lead) {
		if n == 1 {
			continue // left
		}
		if err := <-r; n == 3 && !errors.Is(err, context.Canceled) {
			t.Errorf("Send of a call taken after its context ended: %v; want context.Canceled", err)
		} else if n != 3 && err != nil {
			t.Errorf("Send %d: %v", n+1, err)
		}
	}
	if diff := cmp.Diff([][]int{{0}, {1, 3}, {5, 6, 7}}, f.written()); diff != "" {
		t.Errorf("batches (-want +got):\n%s", diff)
	}
	f.q.Close()
	if err := f.q.Send(ctx, &call{n: 8}); !errors.Is(err, sqlstore.ErrClosed) {
		t.Errorf("Send after Close: %v; want ErrClosed", err)
	}
}

// TestQueueSendEarly checks that a batch holding the lock sends the next
// one at once when more calls wait than it holds, or a full batch, and
// otherwise leaves it until it has ended.
func TestQueueSendEarly(t *testing.T) {
	f := newFakeQueue(2)
	f.early = f.q.SendEarly
	ctx := context.Background()
	var results []<-chan error
	results = append(results, f.send(ctx, 0))
	f.await(t, 0)
	for n := 1; n <= 5; n++ {
		results = append(results, f.send(ctx, n))
		f.await(t, n)
	}
	f.hold <- struct{}{} // the lead ends; {1, 2} holds the lock and sends {3, 4}
	f.await(t, 1)
	want := [][]int{{0}, {1, 2}, {3, 4}}
	for range 1000 {
		if len(f.written()) == len(want) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if diff := cmp.Diff(want, f.written()); diff != "" {
		t.Errorf("batches while {1, 2} is held (-want +got):\n%s", diff)
	}
	f.releaseAll()
	for n, r := range results {
		if err := <-r; err != nil {
			t.Errorf("Send %d: %v", n, err)
		}
	}
	if diff := cmp.Diff(append(want, []int{5}), f.written()); diff != "" {
		t.Errorf("batches (-want +got):\n%s", diff)
	}
}
