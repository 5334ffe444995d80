package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/pgstore"
)

// tracer records the queries and batches that a pool sends.
type tracer struct {
	mu      sync.Mutex
	queries []pgx.TraceQueryStartData
	batches [][]*pgx.QueuedQuery
}

func (t *tracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.queries = append(t.queries, data)
	return ctx
}

func (t *tracer) TraceBatchStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceBatchStartData) context.Context {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.batches = append(t.batches, data.Batch.QueuedQueries)
	return ctx
}

func (t *tracer) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData)     {}
func (t *tracer) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (t *tracer) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}

// addSizes returns the number of pets of each Add statement without keys,
// in the order sent: the length of its first argument, the array of names.
func (t *tracer) addSizes() []int {
	t.mu.Lock()
	defer t.mu.Unlock()
	var sizes []int
	for _, q := range t.queries {
		if len(q.Args) == 4 {
			if names, ok := q.Args[0].([]string); ok {
				sizes = append(sizes, len(names))
			}
		}
	}
	return sizes
}

// keyedSizes returns the number of rows of each keyed batch, in the order
// sent: the length of the names array of its second statement, or 1 when
// the name is given alone.
func (t *tracer) keyedSizes() []int {
	t.mu.Lock()
	defer t.mu.Unlock()
	var sizes []int
	for _, b := range t.batches {
		if len(b) == 2 && len(b[1].Arguments) > 0 {
			switch names := b[1].Arguments[0].(type) {
			case []string:
				sizes = append(sizes, len(names))
			case string:
				sizes = append(sizes, 1)
			}
		}
	}
	return sizes
}

// last returns the last query sent.
func (t *tracer) last() (string, []any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	q := t.queries[len(t.queries)-1]
	return q.SQL, q.Args
}

// addTable is a Store whose Adds the test can hold at the advisory lock
// that Add takes, as another process's insert would.
type addTable struct {
	s      *pgstore.Store
	admin  *pgxpool.Pool
	lock   *pgxpool.Conn // holds the lock while not nil
	tracer *tracer
}

// addSetup returns a migrated Store in a fresh schema, on a pool that
// records the size of every batch.
func addSetup(t *testing.T, opts ...pgstore.Option) *addTable {
	t.Helper()
	tr := &tracer{}
	pool := pgPool(t, func(c *pgxpool.Config) { c.ConnConfig.Tracer = tr })
	return &addTable{s: pgStore(t, pool, opts...), admin: pgPool(t), tracer: tr}
}

// hold takes the advisory lock that Add takes on the table, on a
// connection of its own, until release.
func (a *addTable) hold(t *testing.T) {
	t.Helper()
	conn, err := a.admin.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(context.Background(), `SELECT pg_advisory_lock(x'70657401'::int4, $1::regclass::oid::int4)`, a.s.Table()); err != nil {
		conn.Release()
		t.Fatal(err)
	}
	a.lock = conn
	t.Cleanup(func() { a.release(t) })
}

// release lets the Adds held at the lock go on.
func (a *addTable) release(t *testing.T) {
	t.Helper()
	if a.lock == nil {
		return
	}
	_, err := a.lock.Exec(context.Background(), `SELECT pg_advisory_unlock(x'70657401'::int4, $1::regclass::oid::int4)`, a.s.Table())
	a.lock.Release()
	a.lock = nil
	if err != nil {
		t.Fatal(err)
	}
}

// awaitWaiting waits until n Add statements wait for the lock, and queued
// calls of Add wait for a batch.
func (a *addTable) awaitWaiting(t *testing.T, n, queued int) {
	t.Helper()
	var waiting int
	eventually(t, fmt.Sprintf("%d Add statements at the lock and %d calls queued", n, queued), func() bool {
		err := a.admin.QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity
WHERE wait_event_type = 'Lock' AND wait_event = 'advisory' AND query LIKE '%unnest%' AND query LIKE '%' || $1 || '%'`,
			a.s.Table()).Scan(&waiting)
		if err != nil {
			t.Fatal(err)
		}
		return waiting == n && pgstore.QueuedAdds(a.s) == queued
	})
}

// add calls Add in a goroutine and returns a channel for its result.
func (a *addTable) add(ctx context.Context, name string) <-chan addResult {
	return goAdd(ctx, a.s, "", "", petstore.NewPet{Name: name, CategoryID: 1, Status: petstore.StatusPending})
}

// goAdd calls Add with key ("" for none) under principal in a goroutine
// and returns a channel for its result.
func goAdd(ctx context.Context, s *pgstore.Store, principal, key string, p petstore.NewPet) <-chan addResult {
	out := make(chan addResult, 1)
	go func() {
		pet, replayed, err := s.Add(petstore.WithPrincipal(ctx, principal), p, petstore.AddOptions{IdempotencyKey: key})
		out <- addResult{pet, replayed, err}
	}()
	return out
}

// addResult is what a call of Add returned.
type addResult struct {
	pet      petstore.Pet
	replayed bool
	err      error
}

// stored returns the names of every pet in the table, ascending by ID.
func (a *addTable) stored(t *testing.T) []string {
	t.Helper()
	pets, err := a.s.List(context.Background(), petstore.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range pets {
		names = append(names, p.Name)
	}
	return names
}

// TestAddBatches holds one Add at the lock, as an insert of another
// process would, queues more behind it, and checks that the queued calls
// are inserted together, at most WithMaxBatch at a time, in the order they
// came, each with its own pet and ID.
func TestAddBatches(t *testing.T) {
	a := addSetup(t, pgstore.WithMaxBatch(3))
	ctx := context.Background()
	a.hold(t)
	first := a.add(ctx, "first")
	a.awaitWaiting(t, 1, 0)
	want := []string{"first"}
	var queued []<-chan addResult
	for i := range 7 {
		want = append(want, fmt.Sprintf("queued %d", i))
		queued = append(queued, a.add(ctx, want[i+1]))
		a.awaitWaiting(t, 1, i+1) // one at a time, so that the order is known
	}
	a.release(t)

	results := []addResult{<-first}
	for _, q := range queued {
		results = append(results, <-q)
	}
	for i, r := range results {
		if r.err != nil {
			t.Fatalf("Add %q: %v", want[i], r.err)
		}
		if r.pet.Name != want[i] || r.pet.Status != petstore.StatusPending {
			t.Errorf("Add %q returned %+v", want[i], r.pet)
		}
		got, err := a.s.Get(ctx, r.pet.ID)
		if err != nil || got != r.pet {
			t.Errorf("Get(%d) = %+v, %v; Add returned %+v", r.pet.ID, got, err, r.pet)
		}
		if i > 0 && r.pet.ID <= results[i-1].pet.ID {
			t.Errorf("Add %q got ID %d, not above %d of the call queued before it", want[i], r.pet.ID, results[i-1].pet.ID)
		}
	}
	if diff := cmp.Diff(want, a.stored(t)); diff != "" {
		t.Errorf("stored (-want +got):\n%s", diff)
	}
	// The first alone, at once; then the queue, three at a time.
	if diff := cmp.Diff([]int{1, 3, 3, 1}, a.tracer.addSizes()); diff != "" {
		t.Errorf("batch sizes (-want +got):\n%s", diff)
	}
}

// TestAddBatchInFlight sends a batch of two calls and holds it at the
// lock, then ends the calls' contexts in turn: a batch runs under the
// earliest deadline of its calls, and when it fails every call gets an
// error and nothing is stored; a call cancelled while its batch is in
// flight waits for the batch and gets its outcome, unless every call of
// the batch gave up.
func TestAddBatchInFlight(t *testing.T) {
	type call struct {
		ctx    context.Context
		cancel context.CancelFunc
	}
	background := func() call { return call{context.Background(), func() {}} }
	cancellable := func() call {
		ctx, cancel := context.WithCancel(context.Background())
		return call{ctx, cancel}
	}
	for _, tt := range []struct {
		name   string
		calls  func() [2]call
		cancel []int    // the calls to cancel while the batch is at the lock
		stored []string // the names stored; none means the batch fails
		errs   [2]error // the error each call wraps when the batch fails
	}{
		{
			name: "earliest deadline",
			calls: func() [2]call {
				ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
				return [2]call{{ctx, cancel}, background()}
			},
			errs: [2]error{context.DeadlineExceeded, petstore.ErrUnavailable},
		},
		{
			name:   "one cancelled",
			calls:  func() [2]call { return [2]call{cancellable(), background()} },
			cancel: []int{0},
			stored: []string{"batch 0", "batch 1"},
		},
		{
			name:   "all cancelled",
			calls:  func() [2]call { return [2]call{cancellable(), cancellable()} },
			cancel: []int{0, 1},
			errs:   [2]error{context.Canceled, context.Canceled},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := addSetup(t)
			a.hold(t)
			// A call alone at the lock, which the batch queues behind.
			blockCtx, unblock := context.WithCancel(context.Background())
			blocker := a.add(blockCtx, "blocker")
			a.awaitWaiting(t, 1, 0)
			calls := tt.calls()
			var results [2]<-chan addResult
			for i, c := range calls {
				results[i] = a.add(c.ctx, fmt.Sprintf("batch %d", i))
				a.awaitWaiting(t, 1, i+1)
			}
			// The blocker gives up; the batch goes to the lock.
			unblock()
			if r := <-blocker; !errors.Is(r.err, context.Canceled) {
				t.Fatalf("the blocker's Add = %+v, %v; want it cancelled", r.pet, r.err)
			}
			a.awaitWaiting(t, 1, 0)
			for _, i := range tt.cancel {
				calls[i].cancel()
			}
			if tt.stored == nil {
				// The batch fails with the lock held, before anything could
				// be stored.
				for i, r := range results {
					if got := <-r; !errors.Is(got.err, tt.errs[i]) {
						t.Errorf("call %d: Add = %+v, %v; want an error wrapping %v", i, got.pet, got.err, tt.errs[i])
					}
				}
				a.release(t)
			} else {
				a.release(t)
				for i, r := range results {
					if got := <-r; got.err != nil {
						t.Errorf("call %d: Add = %+v, %v; want it stored", i, got.pet, got.err)
					}
				}
			}
			if diff := cmp.Diff(tt.stored, a.stored(t)); diff != "" {
				t.Errorf("stored (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]int{1, 2}, a.tracer.addSizes()); diff != "" {
				t.Errorf("batch sizes (-want +got):\n%s", diff)
			}
			for _, c := range calls {
				c.cancel()
			}
		})
	}
}
