package petstore

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// TestDeadlineCtx checks that storeCtx keeps the rules of
// context.Context: Err is nil until the context ends, then the reason for
// ever; Done closes when it ends; the parent's values pass through.
func TestDeadlineCtx(t *testing.T) {
	type key struct{}
	parent := context.WithValue(context.Background(), key{}, "v")
	for _, tc := range []struct {
		name        string
		d           time.Duration
		detached    bool
		parentEnded bool // the parent's deadline has passed
		waitDone    bool // ask for Done before the context ends, and wait on it
		release     bool
		want        error // nil: Err stays nil and Done open
	}{
		{name: "before the deadline", d: time.Hour},
		{name: "deadline passed, Err asked first", d: 0, want: context.DeadlineExceeded},
		{name: "deadline passes while waiting on Done", d: time.Millisecond, waitDone: true, want: context.DeadlineExceeded},
		{name: "parent ended, Done asked first", d: time.Hour, parentEnded: true, waitDone: true, want: context.DeadlineExceeded},
		{name: "parent ended, Err asked first", d: time.Hour, parentEnded: true, want: context.DeadlineExceeded},
		{name: "detached from an ended parent", d: time.Hour, detached: true, parentEnded: true, waitDone: true},
		{name: "released", d: time.Hour, waitDone: true, release: true, want: context.Canceled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, cancel := context.WithCancel(parent)
			if tc.parentEnded {
				p, cancel = context.WithTimeout(parent, -1)
			}
			defer cancel()
			c := withStoreDeadline(p, tc.d, tc.detached)
			defer c.release()
			var done <-chan struct{}
			if tc.waitDone {
				done = c.Done()
			}
			if tc.release {
				c.release()
			}
			if done != nil && tc.want != nil {
				<-done
			}
			if err := c.Err(); !errors.Is(err, tc.want) {
				t.Errorf("Err = %v, want %v", err, tc.want)
			}
			if c.Value(key{}) != "v" {
				t.Error("the parent's value does not pass through")
			}
			if tc.want != nil {
				<-c.Done() // closed already
				return
			}
			select {
			case <-c.Done():
				t.Error("Done is closed before the deadline")
			default:
			}
			if d, ok := c.Deadline(); !ok || time.Until(d) < 59*time.Minute {
				t.Errorf("Deadline = %v, %v; want the store's own", d, ok)
			}
		})
	}
	t.Run("kept after release", func(t *testing.T) {
		c := withStoreDeadline(parent, time.Hour, false)
		c.release()
		kept := context.WithoutCancel(c)
		if kept.Err() != nil || kept.Value(key{}) != "v" {
			t.Errorf("a context kept after the call: Err %v, value %v; want nil and the parent's", kept.Err(), kept.Value(key{}))
		}
	})
	t.Run("a child context follows it", func(t *testing.T) {
		c := withStoreDeadline(parent, time.Millisecond, false)
		defer c.release()
		child, cancel := context.WithCancel(c)
		defer cancel()
		<-child.Done()
		if err := child.Err(); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("child's Err = %v, want DeadlineExceeded", err)
		}
	})
	t.Run("concurrent use", func(t *testing.T) {
		c := withStoreDeadline(parent, time.Millisecond, false)
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				<-c.Done()
				if c.Err() == nil {
					t.Error("Err is nil after Done closed")
				}
			})
		}
		wg.Wait()
		c.release()
	})
}

// BenchmarkStoreContext measures what a store call's deadline costs, as a
// storeCtx and as context.WithTimeout, for a store that asks Err once, as
// memstore does.
func BenchmarkStoreContext(b *testing.B) {
	parent, cancel := context.WithCancel(context.Background())
	defer cancel()
	b.Run("impl=withStoreDeadline", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			c := withStoreDeadline(parent, 5*time.Second, false)
			_ = c.Err()
			c.release()
		}
	})
	b.Run("impl=context.WithTimeout", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			c, cancel := context.WithTimeout(parent, 5*time.Second)
			_ = c.Err()
			cancel()
		}
	})
}
