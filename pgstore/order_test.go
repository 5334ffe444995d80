package pgstore_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/pgstore"
)

// orderResult is what a call to Add returned.
type orderResult struct {
	pet petstore.Pet
	err error
}

// TestAddKeepsIDsInCommitOrder enforces the clause of the Store contract
// that pagination relies on: once List has returned a pet, no pet with a
// smaller ID appears later. It makes the race that an identity column alone
// loses happen every time: a trigger holds the first Add between drawing its
// ID and committing, while a second Add runs through another Store on
// another pool, as in another process: only the lock in the database, not
// the queue of one Store, can make it wait.
func TestAddKeepsIDsInCommitOrder(t *testing.T) {
	admin := pgPool(t)
	ctx := context.Background()
	schema := pgSchema(t, admin)
	s := pgNew(t, admin, pgstore.WithSchema(schema))
	other := pgNew(t, pgPool(t), pgstore.WithSchema(schema))
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	fn := pgx.Identifier{schema, "slow_insert"}.Sanitize()
	if _, err := admin.Exec(ctx, fmt.Sprintf(`
CREATE FUNCTION %[1]s() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF NEW.name = 'slow' THEN
		PERFORM pg_sleep(0.5);
	END IF;
	RETURN NEW;
END
$$;
CREATE TRIGGER slow_insert AFTER INSERT ON %[2]s FOR EACH ROW EXECUTE FUNCTION %[1]s();`, fn, s.Table())); err != nil {
		t.Fatal(err)
	}

	slow := make(chan orderResult, 1)
	go func() {
		p, _, err := s.Add(ctx, petstore.NewPet{Name: "slow", CategoryID: 1}, petstore.AddOptions{})
		slow <- orderResult{p, err}
	}()
	// The slow Add has drawn its ID and sleeps before its commit.
	pgAwait(t, admin, "the slow insert to sleep",
		`SELECT EXISTS (SELECT FROM pg_stat_activity WHERE wait_event = 'PgSleep' AND query LIKE '%' || $1 || '%')`,
		schema)

	fast, _, err := other.Add(ctx, petstore.NewPet{Name: "fast", CategoryID: 1}, petstore.AddOptions{})
	if err != nil {
		t.Fatal(err)
	}
	seen, err := s.List(ctx, petstore.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := <-slow
	if r.err != nil {
		t.Fatal(r.err)
	}
	all, err := s.List(ctx, petstore.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	maxSeen := int64(0)
	for _, p := range seen {
		maxSeen = max(maxSeen, p.ID)
	}
	for _, p := range all {
		if !slices.Contains(seen, p) && p.ID < maxSeen {
			t.Errorf("List showed pet %d, then pet %d appeared; IDs must grow in the order pets become visible", maxSeen, p.ID)
		}
	}
	if !slices.Contains(seen, fast) {
		t.Errorf("List after Add returned %v does not show it: %v", fast, seen)
	}
}

// TestConcurrentAddsWhilePaging adds pets from several goroutines on two
// pools, as two processes would, while a reader pages through the store
// with a cursor, and checks that the reader sees every pet exactly once.
func TestConcurrentAddsWhilePaging(t *testing.T) {
	pools := []*pgxpool.Pool{pgPool(t), pgPool(t)}
	ctx := context.Background()
	schema := pgSchema(t, pools[0])
	var stores []*pgstore.Store
	for _, pool := range pools {
		s := pgNew(t, pool, pgstore.WithSchema(schema))
		if err := s.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		stores = append(stores, s)
	}

	const writers, perWriter = 8, 40
	var (
		wg      sync.WaitGroup
		done    atomic.Bool
		mu      sync.Mutex
		added   = map[int64]bool{}
		addErrs = make(chan error, writers)
	)
	for w := range writers {
		s := stores[w%len(stores)]
		wg.Go(func() {
			for i := range perWriter {
				p, _, err := s.Add(ctx, petstore.NewPet{Name: fmt.Sprintf("w%d-%d", w, i), CategoryID: int64(w + 1)}, petstore.AddOptions{})
				if err != nil {
					addErrs <- err
					return
				}
				mu.Lock()
				added[p.ID] = true
				mu.Unlock()
			}
		})
	}
	go func() {
		wg.Wait()
		done.Store(true)
	}()

	seen := map[int64]bool{}
	after := int64(0)
	for {
		finished := done.Load()
		page, err := stores[1].List(ctx, petstore.ListOptions{After: after, Limit: 7})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range page {
			if seen[p.ID] {
				t.Fatalf("pet %d listed twice", p.ID)
			}
			seen[p.ID] = true
			after = p.ID
		}
		if len(page) == 0 && finished {
			break
		}
	}
	close(addErrs)
	for err := range addErrs {
		t.Fatal(err)
	}
	for id := range added {
		if !seen[id] {
			t.Errorf("pet %d was added but paging never showed it", id)
		}
	}
	if len(seen) != writers*perWriter {
		t.Errorf("paging showed %d pets; want %d", len(seen), writers*perWriter)
	}
}
