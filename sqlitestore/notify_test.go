package sqlitestore_test

import (
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/internal/testkit/watchbench"
	"github.com/petstore-go/petstore/sqlitestore"
)

// notified returns a counter of the wakes that NotifyAdds gives on s until
// the test ends.
func notified(t *testing.T, s *sqlitestore.Store) *atomic.Int64 {
	var n atomic.Int64
	s.NotifyAdds(t.Context(), func() { n.Add(1) })
	return &n
}

// An Add wakes the watchers of its own Store, of another Store on the same
// file, and of a Store in another process.
func TestNotifyAdds(t *testing.T) {
	path := newPath(t)
	a, b := open(t, path), open(t, path)
	onA, onB := notified(t, a), notified(t, b)
	add(t, a, "through a", "")
	waitFor(t, "a watcher of a to be woken", func() bool { return onA.Load() > 0 })
	waitFor(t, "a watcher of b to be woken by a's add", func() bool { return onB.Load() > 0 })

	before := onB.Load()
	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), childEnv+"="+path+"|child")
	var out strings.Builder
	child.Stdout, child.Stderr = &out, &out
	if err := child.Run(); err != nil {
		t.Fatalf("the other process: %v\n%s", err, out.String())
	}
	waitFor(t, "a watcher of b to be woken by another process's adds", func() bool { return onB.Load() > before })
}

// A watch stream of a handler on one Store sees the pets created through a
// handler on another Store over the same file without polling: each once,
// in order.
func TestWatchAcross(t *testing.T) {
	path := newPath(t)
	_, err := watchbench.Across(t.Context(), open(t, path), open(t, path), 20, 100, petstore.WithWatch(petstore.Watch{Poll: time.Hour}))
	if err != nil {
		t.Fatal(err)
	}
}

// BenchmarkWatchAcross measures how soon a pet created through a handler on
// one Store reaches a watch stream of a handler on another Store over the
// same file: 200 pets at 20 a second. Run it with -benchtime 1x.
func BenchmarkWatchAcross(b *testing.B) {
	path := newPath(b)
	a, c := open(b, path), open(b, path)
	watchbench.BenchmarkAcross(b, a, c)
}

// BenchmarkWatchIdle reports the CPU of the process (a share of one core)
// and the calls of List a second while 1,000 watch streams of a handler on
// a Store idle for 10 seconds, with 10 and 1,000 views (principals). Run it
// with -benchtime 1x.
func BenchmarkWatchIdle(b *testing.B) {
	watchbench.BenchmarkIdle(b, func(b *testing.B) petstore.Store { return open(b, newPath(b)) })
}
