package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/pgstore"
)

// tracer records the last query that a pool sends, and the number of pets
// of each Add statement, in the order sent: "n" for a batch without keys,
// "keyed n" for a batch with keys.
type tracer struct {
	mu    sync.Mutex
	last  pgx.TraceQueryStartData
	sizes []string
}

func (t *tracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.last = data
	if len(data.Args) == 4 { // the names, categories, statuses and table
		if names, ok := data.Args[0].([]string); ok {
			t.sizes = append(t.sizes, fmt.Sprint(len(names)))
		}
	}
	return ctx
}

func (t *tracer) TraceBatchStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceBatchStartData) context.Context {
	t.mu.Lock()
	defer t.mu.Unlock()
	// A keyed batch is the lock, then the rows: an array of names, or one.
	if q := data.Batch.QueuedQueries; len(q) == 2 && len(q[1].Arguments) > 0 {
		switch names := q[1].Arguments[0].(type) {
		case []string:
			t.sizes = append(t.sizes, fmt.Sprint("keyed ", len(names)))
		case string:
			t.sizes = append(t.sizes, "keyed 1")
		}
	}
	return ctx
}

func (t *tracer) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData)     {}
func (t *tracer) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (t *tracer) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}

// batches returns the sizes of the Add statements sent so far.
func (t *tracer) batches() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]string(nil), t.sizes...)
}

// lastQuery returns the last query sent.
func (t *tracer) lastQuery() (string, []any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.last.SQL, t.last.Args
}

// addTable is a Store whose Adds the test can hold at the advisory lock
// that Add takes, as another process's insert would.
type addTable struct {
	s           *pgstore.Store
	pool, admin *pgxpool.Pool
	application string        // of the connections of pool
	lock        *pgxpool.Conn // holds the lock while not nil
	tracer      *tracer
}

// addSetup returns a migrated Store in a fresh schema, on a pool of its own
// that records the Add statements it sends.
func addSetup(t *testing.T, opts ...pgstore.Option) *addTable {
	t.Helper()
	tr := &tracer{}
	pool, application := appPool(t, func(c *pgxpool.Config) { c.ConnConfig.Tracer = tr })
	return &addTable{s: pgStore(t, pool, opts...), pool: pool, admin: pgPool(t), application: application, tracer: tr}
}

// lockSQL takes or gives up the advisory lock that Add takes on the table $1.
const lockSQL = `SELECT pg_advisory_%s(x'70657401'::int4, $1::regclass::oid::int4)`

// hold takes the advisory lock that Add takes on the table, on a
// connection of its own, until release.
func (a *addTable) hold(t *testing.T) {
	t.Helper()
	conn, err := a.admin.Acquire(context.Background())
	must(t, err)
	a.lock = conn
	t.Cleanup(func() { a.release(t) })
	_, err = conn.Exec(context.Background(), fmt.Sprintf(lockSQL, "lock"), a.s.Table())
	must(t, err)
}

// release lets the Adds held at the lock go on.
func (a *addTable) release(t *testing.T) {
	t.Helper()
	if a.lock == nil {
		return
	}
	_, err := a.lock.Exec(context.Background(), fmt.Sprintf(lockSQL, "unlock"), a.s.Table())
	a.lock.Release()
	a.lock = nil
	must(t, err)
}

// awaitWaiting waits until n statements of the Store's pool wait for the
// lock, and queued calls of Add on a.s wait for a batch.
func (a *addTable) awaitWaiting(t *testing.T, n, queued int) {
	t.Helper()
	var waiting int
	eventually(t, fmt.Sprintf("%d statements at the lock and %d calls queued", n, queued), func() bool {
		must(t, a.admin.QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity
WHERE application_name = $1 AND wait_event_type = 'Lock' AND wait_event = 'advisory'`, a.application).Scan(&waiting))
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
	var names []string
	for _, p := range pgList(t, a.s, petstore.ListOptions{}) {
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
	names := []string{"first"}
	var queued []<-chan addResult
	for i := range 7 {
		names = append(names, fmt.Sprintf("queued %d", i))
		queued = append(queued, a.add(ctx, names[i+1]))
		a.awaitWaiting(t, 1, i+1) // one at a time, so that the order is known
	}
	a.release(t)

	// Each call got its own pet, as stored, in the order the calls came.
	var returned, want []petstore.Pet
	for i, q := range append([]<-chan addResult{first}, queued...) {
		r := <-q
		if r.err != nil {
			t.Fatalf("Add %q: %v", names[i], r.err)
		}
		returned = append(returned, r.pet)
		want = append(want, petstore.Pet{ID: r.pet.ID, NewPet: petstore.NewPet{Name: names[i], CategoryID: 1, Status: petstore.StatusPending}})
	}
	if diff := cmp.Diff(want, returned); diff != "" {
		t.Errorf("Add returned (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, pgList(t, a.s, petstore.ListOptions{})); diff != "" {
		t.Errorf("stored, in the order of their IDs (-want +got):\n%s", diff)
	}
	// The first alone, at once; then the queue, three at a time.
	if diff := cmp.Diff([]string{"1", "3", "3", "1"}, a.tracer.batches()); diff != "" {
		t.Errorf("batch sizes (-want +got):\n%s", diff)
	}
}

// TestAddBatchInFlight sends a batch of two calls and holds it at the
// lock, then ends the calls' contexts in turn: a batch runs under the
// earliest deadline of its calls, and when it fails every call gets an
// error and nothing is stored, no pet and no key, so that the same keys
// store their pets afterwards; a call cancelled while its batch is in
// flight waits for the batch and gets its outcome, unless every call of
// the batch gave up.
func TestAddBatchInFlight(t *testing.T) {
	for _, tt := range []struct {
		name     string
		deadline time.Duration // of the first call, 0 for none
		keyed    bool          // each call has a key of its own
		cancel   []int         // the calls to cancel while the batch is at the lock
		stored   []string      // the names stored; none means the batch fails
		errs     [2]error      // the error each call wraps when the batch fails
	}{
		{name: "earliest deadline", deadline: 3 * time.Second, errs: [2]error{context.DeadlineExceeded, petstore.ErrUnavailable}},
		{name: "one cancelled", cancel: []int{0}, stored: []string{"batch 0", "batch 1"}},
		{name: "all cancelled", cancel: []int{0, 1}, errs: [2]error{context.Canceled, context.Canceled}},
		{name: "all cancelled, keyed", keyed: true, cancel: []int{0, 1}, errs: [2]error{context.Canceled, context.Canceled}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := addSetup(t)
			a.hold(t)
			// A call alone at the lock, which the batch queues behind.
			blockCtx, unblock := context.WithCancel(context.Background())
			blocker := a.add(blockCtx, "blocker")
			a.awaitWaiting(t, 1, 0)
			var ctxs [2]context.Context
			var cancels [2]context.CancelFunc
			for i := range ctxs {
				ctxs[i], cancels[i] = context.WithCancel(context.Background())
				defer cancels[i]()
			}
			if tt.deadline > 0 {
				ctxs[0], cancels[0] = context.WithTimeout(ctxs[0], tt.deadline)
				defer cancels[0]()
			}
			var pets [2]petstore.NewPet
			var keys [2]string
			var results [2]<-chan addResult
			for i, ctx := range ctxs {
				pets[i] = petstore.NewPet{Name: fmt.Sprintf("batch %d", i), CategoryID: int64(i + 1), Status: petstore.StatusPending}
				if tt.keyed {
					keys[i] = fmt.Sprintf("key %d", i)
				}
				results[i] = goAdd(ctx, a.s, "alice", keys[i], pets[i])
				a.awaitWaiting(t, 1, i+1)
			}
			// The blocker gives up; the batch goes to the lock.
			unblock()
			if r := <-blocker; !errors.Is(r.err, context.Canceled) {
				t.Fatalf("the blocker's Add = %+v, %v; want it cancelled", r.pet, r.err)
			}
			a.awaitWaiting(t, 1, 0)
			for _, i := range tt.cancel {
				cancels[i]()
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
			want := []string{"1", "2"}
			if tt.keyed {
				want = []string{"1", "keyed 2", "keyed 1", "keyed 1"} // the batch, then each Add again
				if n := pgCount(t, a.admin, keysTable(a.s)); n != 0 {
					t.Errorf("the keys table holds %d keys; want none", n)
				}
				for i, p := range pets {
					got, replayed, err := a.s.Add(petstore.WithPrincipal(context.Background(), "alice"), p, petstore.AddOptions{IdempotencyKey: keys[i]})
					if err != nil || replayed || got.NewPet != p {
						t.Errorf("Add with key %d again = %+v, replayed %v, %v; want it stored", i, got, replayed, err)
					}
				}
			}
			if diff := cmp.Diff(want, a.tracer.batches()); diff != "" {
				t.Errorf("batch sizes (-want +got):\n%s", diff)
			}
		})
	}
}

// keysTable returns the keys table of s, quoted and qualified.
func keysTable(s *pgstore.Store) string {
	return strings.TrimSuffix(s.Table(), `"`) + `_keys"`
}

// TestAddKeyedBatch queues calls with and without keys behind an Add held
// at the lock, and checks that they go in one batch that answers each as
// the Store contract says: a new key stores its pet; a key stored before,
// or sent by an earlier call of the batch, replays the pet stored under
// it for the same pet and is reported reused for another; the same key
// under another principal is another key. The outcome of one call does not
// fail the others.
func TestAddKeyedBatch(t *testing.T) {
	a := addSetup(t)
	ctx := context.Background()
	rex := petstore.NewPet{Name: "Rex", CategoryID: 1, Status: petstore.StatusAvailable}
	tom := petstore.NewPet{Name: "Tom", CategoryID: 2}
	before, _, err := a.s.Add(petstore.WithPrincipal(ctx, "alice"), rex, petstore.AddOptions{IdempotencyKey: "stored"})
	must(t, err)

	a.hold(t)
	first := a.add(ctx, "first")
	a.awaitWaiting(t, 1, 0)
	reused := petstore.ErrIdempotencyKeyReused
	calls := []struct {
		principal, key string
		pet            petstore.NewPet
		// The outcome: sameAs is the call whose pet is answered, -1 for
		// the pet stored before.
		replayed bool
		err      error
		sameAs   int
	}{
		{"alice", "new", rex, false, nil, 0},       // stored
		{"", "", tom, false, nil, 1},               // no key: stored
		{"alice", "new", rex, true, nil, 0},        // replays 0
		{"alice", "new", tom, false, reused, 0},    // reuses 0's key
		{"alice", "stored", rex, true, nil, -1},    // replays the pet stored before
		{"alice", "stored", tom, false, reused, 0}, // reuses its key
		{"bob", "new", tom, false, nil, 6},         // another principal: stored
	}
	var results []<-chan addResult
	for i, c := range calls {
		results = append(results, goAdd(ctx, a.s, c.principal, c.key, c.pet))
		a.awaitWaiting(t, 1, i+1)
	}
	a.release(t)
	if r := <-first; r.err != nil {
		t.Fatal(r.err)
	}
	var got []addResult
	for _, r := range results {
		got = append(got, <-r)
	}
	for i, want := range calls {
		r := got[i]
		if !errors.Is(r.err, want.err) { // for a nil want.err, r.err must be nil
			t.Errorf("call %d: err = %v; want %v", i, r.err, want.err)
			continue
		}
		if want.err != nil {
			continue
		}
		wantPet := before
		if want.sameAs >= 0 {
			wantPet = got[want.sameAs].pet
		}
		if r.replayed != want.replayed || r.pet != wantPet || r.pet.NewPet != want.pet {
			t.Errorf("call %d: Add = %+v, replayed %v; want %+v, replayed %v", i, r.pet, r.replayed, wantPet, want.replayed)
		}
	}
	// New pets in the order of the calls, after the one at the lock.
	if diff := cmp.Diff([]string{"Rex", "first", "Rex", "Tom", "Tom"}, a.stored(t)); diff != "" {
		t.Errorf("stored (-want +got):\n%s", diff)
	}
	if !(got[0].pet.ID < got[1].pet.ID && got[1].pet.ID < got[6].pet.ID) {
		t.Errorf("IDs %d, %d, %d are not in the order of the calls", got[0].pet.ID, got[1].pet.ID, got[6].pet.ID)
	}
	if n := pgCount(t, a.admin, keysTable(a.s)); n != 3 {
		t.Errorf("the keys table holds %d keys; want 3", n)
	}
	// The Add before the lock, the one at it, then one keyed batch for the
	// queued calls, each key sent once: 7 calls less the 3 that repeat a
	// key of an earlier call of the batch.
	if diff := cmp.Diff([]string{"keyed 1", "1", "keyed 4"}, a.tracer.batches()); diff != "" {
		t.Errorf("batch sizes (-want +got):\n%s", diff)
	}
}

// TestAddKeyedAcrossStores sends the same key through two Stores, as two
// processes would, while both wait for the lock: one stores the pet and
// the other replays it, or, for another pet, is told the key was reused.
// Nothing is stored twice.
func TestAddKeyedAcrossStores(t *testing.T) {
	for _, tt := range []struct {
		name   string
		second petstore.NewPet
		err    error
	}{
		{"same pet", petstore.NewPet{Name: "Rex", CategoryID: 1}, nil},
		{"other pet", petstore.NewPet{Name: "Tom", CategoryID: 1}, petstore.ErrIdempotencyKeyReused},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := addSetup(t)
			other := pgNew(t, a.pool, pgstore.WithSchema(strings.Split(a.s.Table(), `"`)[1]))
			ctx := context.Background()
			rex := petstore.NewPet{Name: "Rex", CategoryID: 1}
			a.hold(t)
			r1 := goAdd(ctx, a.s, "alice", "k", rex)
			a.awaitWaiting(t, 1, 0)
			r2 := goAdd(ctx, other, "alice", "k", tt.second)
			a.awaitWaiting(t, 2, 0)
			a.release(t)
			got1, got2 := <-r1, <-r2
			if got1.err != nil || got1.replayed || got1.pet.NewPet != rex {
				t.Fatalf("first Add = %+v, replayed %v, %v; want Rex stored", got1.pet, got1.replayed, got1.err)
			}
			if tt.err != nil {
				if !errors.Is(got2.err, tt.err) {
					t.Errorf("second Add = %+v, %v; want %v", got2.pet, got2.err, tt.err)
				}
			} else if got2.err != nil || !got2.replayed || got2.pet != got1.pet {
				t.Errorf("second Add = %+v, replayed %v, %v; want %+v replayed", got2.pet, got2.replayed, got2.err, got1.pet)
			}
			if diff := cmp.Diff([]string{"Rex"}, a.stored(t)); diff != "" {
				t.Errorf("stored (-want +got):\n%s", diff)
			}
		})
	}
}
