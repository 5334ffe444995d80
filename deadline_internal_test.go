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

	t.Run("before the deadline", func(t *testing.T) {
		c := withStoreDeadline(parent, time.Hour, false)
		defer c.release()
		if err := c.Err(); err != nil {
			t.Errorf("Err = %v before the deadline", err)
		}
		select {
		case <-c.Done():
			t.Error("Done is closed before the deadline")
		default:
		}
		if c.Value(key{}) != "v" {
			t.Error("the parent's value does not pass through")
		}
		if d, ok := c.Deadline(); !ok || time.Until(d) < 59*time.Minute {
			t.Errorf("Deadline = %v, %v", d, ok)
		}
	})
	t.Run("deadline passed, Err asked first", func(t *testing.T) {
		c := withStoreDeadline(parent, 0, false)
		defer c.release()
		if err := c.Err(); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Err = %v, want DeadlineExceeded", err)
		}
		<-c.Done() // closed already
	})
	t.Run("deadline passes while waiting on Done", func(t *testing.T) {
		c := withStoreDeadline(parent, time.Millisecond, false)
		defer c.release()
		<-c.Done()
		if err := c.Err(); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Err = %v after Done closed, want DeadlineExceeded", err)
		}
	})
	t.Run("parent cancelled", func(t *testing.T) {
		p, cancel := context.WithCancel(parent)
		c := withStoreDeadline(p, time.Hour, false)
		defer c.release()
		done := c.Done()
		cancel()
		<-done
		if err := c.Err(); !errors.Is(err, context.Canceled) {
			t.Errorf("Err = %v, want Canceled", err)
		}
	})
	t.Run("parent cancelled, Err asked first", func(t *testing.T) {
		p, cancel := context.WithCancel(parent)
		cancel()
		c := withStoreDeadline(p, time.Hour, false)
		defer c.release()
		if err := c.Err(); !errors.Is(err, context.Canceled) {
			t.Errorf("Err = %v, want Canceled", err)
		}
	})
	t.Run("detached", func(t *testing.T) {
		p, cancel := context.WithTimeout(parent, time.Nanosecond)
		cancel()
		c := withStoreDeadline(p, time.Hour, true)
		defer c.release()
		if err := c.Err(); err != nil {
			t.Errorf("Err = %v of a context detached from its cancelled parent", err)
		}
		if d, _ := c.Deadline(); time.Until(d) < 59*time.Minute {
			t.Errorf("Deadline = %v, the parent's; want the store's own", d)
		}
		select {
		case <-c.Done():
			t.Error("Done closed with the detached parent")
		default:
		}
		if c.Value(key{}) != "v" {
			t.Error("the parent's value does not pass through")
		}
	})
	t.Run("kept after release", func(t *testing.T) {
		c := withStoreDeadline(parent, time.Hour, false)
		c.release()
		kept := context.WithoutCancel(c)
		if kept.Err() != nil || kept.Value(key{}) != "v" {
			t.Errorf("a context kept after the call: Err %v, value %v; want nil and the parent's", kept.Err(), kept.Value(key{}))
		}
	})
	t.Run("released", func(t *testing.T) {
		c := withStoreDeadline(parent, time.Hour, false)
		done := c.Done()
		c.release()
		<-done
		if err := c.Err(); !errors.Is(err, context.Canceled) {
			t.Errorf("Err = %v after release, want Canceled as after a WithTimeout's cancel", err)
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
