package pgstore_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/internal/testkit/watchbench"
	"github.com/petstore-go/petstore/pgstore"
)

// A Store's watchers are woken by the adds of another Store, on another
// pool, on the same table. A watcher that lists after its cursor at each
// wake, and never polls, sees every pet, also those added while its
// listener's backend was terminated, and the listener comes back.
func TestNotifyAdds(t *testing.T) {
	poolA := pgPool(t)
	schema := pgMigratedSchema(t, poolA)
	a, b := pgNew(t, poolA, pgstore.WithSchema(schema)), pgNew(t, pgPool(t), pgstore.WithSchema(schema))

	woken := make(chan struct{}, 1)
	b.NotifyAdds(t.Context(), func() {
		select {
		case woken <- struct{}{}:
		default:
		}
	})
	var mu sync.Mutex
	var seen []int64
	go func() { // lists b at each wake, as a watch's reader does
		var after int64
		for {
			select {
			case <-t.Context().Done():
				return
			case <-woken:
			}
			pets, err := b.List(t.Context(), petstore.ListOptions{After: after})
			if err != nil {
				return
			}
			mu.Lock()
			for _, p := range pets {
				seen = append(seen, p.ID)
				after = p.ID
			}
			mu.Unlock()
		}
	}()
	listener := func() (pid int32) {
		t.Helper()
		eventually(t, "a backend to listen for b", func() bool {
			return poolA.QueryRow(t.Context(), `SELECT pid FROM pg_stat_activity WHERE query = 'LISTEN ' || $1`, pgstore.Channel(b)).Scan(&pid) == nil
		})
		return pid
	}
	// addSeen adds a pet through a, and waits for the watcher of b to see it.
	addSeen := func(name string) {
		t.Helper()
		id := pgAdd(t, a, petstore.NewPet{Name: name, CategoryID: 1}).ID
		eventually(t, fmt.Sprintf("the watcher of b to see pet %d", id), func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(seen) > 0 && seen[len(seen)-1] >= id
		})
	}

	first := listener()
	addSeen("before")
	pgExec(t, poolA, "SELECT pg_terminate_backend($1)", first)
	addSeen("in the gap")
	if second := listener(); second == first {
		t.Fatalf("the listener's backend %d is still there", first)
	}
	addSeen("after")
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 3 {
		t.Errorf("the watcher saw pets %v, want 3 of them", seen)
	}
}

// A watch stream of a handler on one Store sees the pets created through a
// handler on another Store, on another pool, over the same table without
// polling: each once, in order.
func TestWatchAcross(t *testing.T) {
	a, b := twoStores(t)
	_, err := watchbench.Across(t.Context(), a, b, 20, 100, petstore.WithWatch(petstore.Watch{Poll: time.Hour}))
	must(t, err)
}

// BenchmarkWatchAcross measures how soon a pet created through a handler on
// one Store reaches a watch stream of a handler on another Store, on
// another pool, over the same table: 200 pets at 20 a second. Run it with
// -benchtime 1x.
func BenchmarkWatchAcross(b *testing.B) {
	x, y := twoStores(b)
	watchbench.BenchmarkAcross(b, x, y)
}

// twoStores returns two Stores on one migrated table, each on a pool of
// its own, as in two processes.
func twoStores(tb testing.TB) (*pgstore.Store, *pgstore.Store) {
	poolA := pgPool(tb)
	schema := pgMigratedSchema(tb, poolA)
	return pgNew(tb, poolA, pgstore.WithSchema(schema)), pgNew(tb, pgPool(tb), pgstore.WithSchema(schema))
}

// BenchmarkWatchIdle reports the CPU of the process (a share of one core)
// and the calls of List a second while 1,000 watch streams of a handler on
// a Store idle for 10 seconds, with 10 and 1,000 views (principals). Run it
// with -benchtime 1x.
func BenchmarkWatchIdle(b *testing.B) {
	watchbench.BenchmarkIdle(b, func(b *testing.B) petstore.Store { return pgStore(b, pgPool(b)) })
}
