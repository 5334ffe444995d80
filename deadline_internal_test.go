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

// BenchmarkStoreContext measures what a store call's deadline costs, the
// way the handler makes it (from its pool, with the principal), a new
// storeCtx, and context.WithTimeout, for a store that asks Err once, as
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
	b.Run("impl=storeCtxPool", func(b *testing.B) {
		var pool storeCtxPool
		caller := &callerCtx{Context: parent, principal: "key-0123456789abcdef"}
		b.ReportAllocs()
		for b.Loop() {
			c := pool.get(caller, 5*time.Second, false)
			_ = c.Err()
			_ = Principal(c)
			pool.put(c)
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

// TestStoreCtxPrincipal checks the principal that a store's context
// carries: the one that the handler knows, or else the parent's, or else a
// fingerprint of the token; and none without a token.
func TestStoreCtxPrincipal(t *testing.T) {
	background := context.Background()
	for _, tc := range []struct {
		name   string
		caller *callerCtx
		want   string
	}{
		{"known", &callerCtx{Context: background, principal: "key-1", token: "t"}, "key-1"},
		{"the parent's", &callerCtx{Context: WithPrincipal(background, "alice"), token: "t"}, "alice"},
		{"a fingerprint", &callerCtx{Context: background, token: "t"}, tokenPrincipal("t")},
		{"a fingerprint, not the parent's empty one", &callerCtx{Context: WithPrincipal(background, ""), token: "t"}, tokenPrincipal("t")},
		{"none", &callerCtx{Context: background}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var pool storeCtxPool
			c := pool.get(tc.caller, time.Hour, false)
			defer pool.put(c)
			if got := Principal(c); got != tc.want {
				t.Errorf("Principal of the store's context = %q, want %q", got, tc.want)
			}
			if got := Principal(tc.caller); got != tc.want {
				t.Errorf("Principal of the caller's context = %q, want %q", got, tc.want)
			}
		})
	}
	if got, want := tokenPrincipal("t"), "token-e3b98a4da31a127d"; got != want {
		t.Errorf("tokenPrincipal(%q) = %q, want %q: the first 8 bytes of its SHA-256 in hex", "t", got, want)
	}
}

// TestStoreCtxPool checks that a storeCtx whose Done was asked for is never
// handed out again, since its timer or its watch on the parent may still
// hold it, and that one handed out again is as new.
func TestStoreCtxPool(t *testing.T) {
	var pool storeCtxPool
	parent := context.Background()
	for range 100 {
		c := pool.get(parent, time.Hour, false)
		_ = c.Done() // asked for, as pgx does, not waited on
		pool.put(c)
		if !errors.Is(c.Err(), context.Canceled) {
			t.Fatalf("Err after put = %v, want Canceled", c.Err())
		}
		d := pool.get(parent, time.Hour, false)
		if d == c {
			t.Fatal("a storeCtx whose Done was asked for was handed out again")
		}
		pool.put(d)
	}
	c := pool.get(&callerCtx{Context: parent, token: "t"}, time.Hour, false)
	pool.put(c)
	c = pool.get(parent, time.Hour, false)
	defer pool.put(c)
	if err := c.Err(); err != nil {
		t.Errorf("Err of a storeCtx from the pool = %v, want nil", err)
	}
	if p := Principal(c); p != "" {
		t.Errorf("Principal of a storeCtx from the pool = %q, the previous call's", p)
	}
}

// TestLinkValue checks that the longest Link values, of every status, fit
// the one allocation that linkValue makes.
func TestLinkValue(t *testing.T) {
	for _, st := range Statuses() {
		q := listQuery{limit: MaxPageSize, status: st, after: 1<<63 - 1}
		want := string(q.appendLink(nil))
		if len(want) > maxLinkLen {
			t.Errorf("the Link value of status %s has %d bytes, more than maxLinkLen (%d)", st, len(want), maxLinkLen)
		}
		if got := q.linkValue(); len(got) != 1 || got[0] != want {
			t.Errorf("linkValue = %q, want [%q]", got, want)
		}
		if allocs := testing.AllocsPerRun(100, func() { _ = q.linkValue() }); allocs != 1 {
			t.Errorf("linkValue allocates %v times, want 1", allocs)
		}
	}
}
