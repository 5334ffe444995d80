package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/internal/testkit/loadtest"
	"github.com/petstore-go/petstore/internal/testkit/pgtest"
	"github.com/petstore-go/petstore/petstoretest"
	"github.com/petstore-go/petstore/pgstore"
)

// A replicated is a throwaway primary and a hot standby of it, with a pool
// on each.
type replicated struct {
	primary, standby  *pgtest.Cluster
	pool, replicaPool *pgxpool.Pool
}

// pgReplicated starts a primary and a hot standby of it in temporary
// directories (see pgtest.Cluster.NewStandby). It skips the test where
// PostgreSQL's server binaries are not installed, and fails it there under
// CI=true.
func pgReplicated(t *testing.T) *replicated {
	t.Helper()
	r := &replicated{primary: pgtest.NewCluster(t)}
	r.primary.Start(t)
	r.standby = r.primary.NewStandby(t)
	r.standby.Start(t)
	r.pool = urlPool(t, r.primary.URL())
	r.replicaPool = urlPool(t, r.standby.URL())
	return r
}

// replicaStore returns a Store on r's primary, reading from its standby,
// on the table of a fresh schema, migrated, once the standby serves it.
// It is closed when the test ends.
func (r *replicated) replicaStore(t *testing.T, opts ...pgstore.Option) *pgstore.Store {
	t.Helper()
	return r.storeVia(t, r.replicaPool, pgMigratedSchema(t, r.pool), opts...)
}

// storeVia returns a Store reading through replica on the table in schema,
// once the standby has replayed the table and the replica serves, closed
// when the test ends.
func (r *replicated) storeVia(t *testing.T, replica *pgxpool.Pool, schema string, opts ...pgstore.Option) *pgstore.Store {
	t.Helper()
	opts = append([]pgstore.Option{pgstore.WithSchema(schema), pgstore.WithReplicas(replica)}, opts...)
	s := pgNew(t, r.pool, opts...)
	t.Cleanup(s.Close)
	pgAwait(t, r.replicaPool, "the standby to replay the table", `SELECT to_regclass($1) IS NOT NULL`, s.Table())
	awaitServing(t, s, true)
	return s
}

// checkGet fails t unless s's Get finds pet.
func checkGet(t *testing.T, s *pgstore.Store, pet petstore.Pet) {
	t.Helper()
	if got, err := s.Get(context.Background(), pet.ID); err != nil || got != pet {
		t.Errorf("Get(%d) = %+v, %v; want %+v", pet.ID, got, err, pet)
	}
}

// checkListed fails t unless s's List holds pet.
func checkListed(t *testing.T, s *pgstore.Store, pet petstore.Pet) {
	t.Helper()
	if got, err := s.List(context.Background(), petstore.ListOptions{}); err != nil || !slices.Contains(got, pet) {
		t.Errorf("List = %+v, %v; want pet %d listed", got, err, pet.ID)
	}
}

// TestReplicaStore runs the conformance suite on Stores that read from a
// hot standby.
func TestReplicaStore(t *testing.T) {
	r := pgReplicated(t)
	petstoretest.TestStore(t, func(t *testing.T) petstore.Store {
		return r.replicaStore(t)
	})
}

// TestReplicaPaused pauses the standby's replay: the Store that added a pet
// still finds it at once, by Get and by List, from the primary, and counts
// the fallbacks; another Store may not list it while the standby lags
// within the bound, finds it by Get, and lists it once the lag passes the
// bound. Once replay resumes, reads go back to the standby.
func TestReplicaPaused(t *testing.T) {
	r := pgReplicated(t)
	const maxLag = 2 * time.Second
	schema := pgMigratedSchema(t, r.pool)
	s := r.storeVia(t, r.replicaPool, schema, pgstore.WithReplicaMaxLag(maxLag))
	other := r.storeVia(t, r.replicaPool, schema, pgstore.WithReplicaMaxLag(maxLag))
	ctx := context.Background()
	before := pgAdd(t, s, petstore.NewPet{Name: "before the pause", CategoryID: 1})
	pgAwait(t, r.replicaPool, "the standby to replay the first pet", `SELECT EXISTS (SELECT FROM `+s.Table()+` WHERE id = $1)`, before.ID)

	pgExec(t, r.replicaPool, `SELECT pg_wal_replay_pause()`)
	pgAwait(t, r.replicaPool, "replay to pause", `SELECT pg_get_wal_replay_pause_state() = 'paused'`)
	paused := time.Now()
	start := s.ReadStats()
	pet := pgAdd(t, s, petstore.NewPet{Name: "during the pause", CategoryID: 2})
	checkGet(t, s, pet)
	checkListed(t, s, pet)
	if got := s.ReadStats(); got.Fallback-start.Fallback != 2 || got.Replica != start.Replica {
		t.Errorf("after a Get and a List of a pet the paused standby lacks: %d fallbacks and %d reads on the replica; want 2 and 0",
			got.Fallback-start.Fallback, got.Replica-start.Replica)
	}

	// Another Store: a Get finds the pet on the primary; a List may miss
	// it while the standby lags within the bound.
	checkGet(t, other, pet)
	if got, err := other.Get(ctx, pet.ID+1); !errors.Is(err, petstore.ErrNotFound) {
		t.Errorf("Get(%d), past the last pet, on another Store = %+v, %v; want ErrNotFound", pet.ID+1, got, err)
	}
	got := pgList(t, other, petstore.ListOptions{})
	if lagged := time.Since(paused); lagged < maxLag/2 && (slices.Contains(got, pet) || !slices.Contains(got, before)) {
		t.Errorf("another Store listed %+v %v after the pause, within the bound; want the standby's stale list, with pet %d and without pet %d",
			got, lagged, before.ID, pet.ID)
	}
	st := awaitServing(t, other, false)
	// The replica's last check before the pause may have come up to an
	// interval before it.
	if lagged := time.Since(paused); lagged < maxLag-pgstore.ReplicaCheckInterval {
		t.Errorf("the replica stopped serving %v after the pause, with a lag of %v; want it serving until the lag passes %v", lagged, st.Lag, maxLag)
	}
	checkListed(t, other, pet)

	pgExec(t, r.replicaPool, `SELECT pg_wal_replay_resume()`)
	awaitServing(t, other, true)
	awaitServing(t, s, true) // each Store checks the replica on its own
	start = s.ReadStats()
	checkGet(t, s, pet)
	if got := s.ReadStats(); got.Replica-start.Replica != 1 {
		t.Errorf("after replay resumed, %d of a Get were served by the replica; want 1 (stats %+v)", got.Replica-start.Replica, got)
	}
}

// TestReplicaRestart stops the standby under a Store and starts it again:
// no read or create fails, every read finds the Store's own pets, and
// reads go back to the standby once it is back.
func TestReplicaRestart(t *testing.T) {
	r := pgReplicated(t)
	s := r.replicaStore(t)
	ctx := context.Background()
	step := func(phase string) {
		t.Helper()
		pet, _, err := s.Add(ctx, petstore.NewPet{Name: phase, CategoryID: 1}, petstore.AddOptions{})
		if err != nil {
			t.Fatalf("%s: Add: %v", phase, err)
		}
		if got, err := s.Get(ctx, pet.ID); err != nil || got != pet {
			t.Fatalf("%s: Get(%d) = %+v, %v; want %+v", phase, pet.ID, got, err, pet)
		}
		page, err := s.List(ctx, petstore.ListOptions{After: pet.ID - 1, Limit: 1})
		if err != nil || len(page) != 1 || page[0] != pet {
			t.Fatalf("%s: List after %d = %+v, %v; want [%+v]", phase, pet.ID-1, page, err, pet)
		}
	}
	step("before")
	r.standby.Stop(t)
	for range 20 {
		step("standby stopped")
	}
	// The replica may first stop serving for its lag, without an error:
	// wait for its check to find it unreachable.
	awaitReplica(t, s, "the stopped replica to fail with ErrUnavailable", func(st pgstore.ReplicaStatus) bool {
		return !st.Serving && errors.Is(st.Err, petstore.ErrUnavailable)
	})
	for range 20 {
		step("standby stopped")
	}
	down := s.ReadStats()
	r.standby.Start(t)
	awaitServing(t, s, true)
	// Whether one read finds the standby caught up with the Add before it
	// is depends on the machine's load: step until one has been served by
	// it, which must happen, rather than count them.
	for deadline := time.Now().Add(time.Minute); s.ReadStats().Replica == down.Replica; {
		if time.Now().After(deadline) {
			t.Fatalf("a minute after the standby came back, no read was served by it (stats %+v)", s.ReadStats())
		}
		step("standby started again")
	}
	t.Logf("reads: %+v", s.ReadStats())
}

// TestReplicaMixedLoad runs a steady mixed load through one Store with a
// healthy standby: workers that each add a pet, then get it and list the
// page that starts at it. No read may miss the pet its worker added. The
// Store waits for the standby as long as it takes, and tolerates any lag
// that a loaded machine may cause, so that every read must be served by the
// standby, after waiting for it to replay the pet when it has not yet:
// none by the primary. It logs the read latencies beside those of the same
// load on the primary alone, and the waits for the standby.
//
//	go test -run TestReplicaMixedLoad -v ./pgstore
func TestReplicaMixedLoad(t *testing.T) {
	r := pgReplicated(t)
	s := r.replicaStore(t, pgstore.WithReplicaWait(time.Minute), pgstore.WithReplicaMaxLag(time.Hour))
	withReplica := mixedLoad(t, s)
	st := s.ReadStats()
	alone := mixedLoad(t, pgStore(t, r.pool))

	t.Logf("%d reads: %d served by the standby, %d by the primary, %d fallbacks; %d waited for the standby to replay the Store's last pet, %v on average",
		len(withReplica), st.Replica, st.Primary, st.Fallback, st.Waits, meanWait(st))
	t.Logf("read latency with the standby: p50 %v, p99 %v; on the primary alone: p50 %v, p99 %v",
		percentile(withReplica, 50), percentile(withReplica, 99), percentile(alone, 50), percentile(alone, 99))
	if st.Replica != int64(len(withReplica)) || st.Primary != 0 || st.Fallback != 0 || st.Waits > st.Replica {
		t.Errorf("of %d reads, %d were served by the standby, %d by the primary and %d by fallback, and %d waited; "+
			"want all served by the standby, none by the primary or by fallback (stats %+v)",
			len(withReplica), st.Replica, st.Primary, st.Fallback, st.Waits, st)
	}
}

// mixedLoad runs 4 workers, each adding 250 pets one after another and,
// after each, getting it and listing the page of 5 that starts at it; it
// fails the test when a read misses the pet, and returns the durations of
// the reads.
func mixedLoad(t *testing.T, s petstore.Store) []time.Duration {
	t.Helper()
	const workers, rounds = 4, 250
	ctx := context.Background()
	durations := make([][]time.Duration, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range rounds {
				pet, _, err := s.Add(ctx, petstore.NewPet{Name: fmt.Sprintf("worker %d pet %d", w, i), CategoryID: 1}, petstore.AddOptions{})
				if err != nil {
					t.Error(err)
					return
				}
				start := time.Now()
				got, err := s.Get(ctx, pet.ID)
				durations[w] = append(durations[w], time.Since(start))
				if err != nil || got != pet {
					t.Errorf("Get(%d) right after its Add = %+v, %v; want %+v", pet.ID, got, err, pet)
					return
				}
				start = time.Now()
				page, err := s.List(ctx, petstore.ListOptions{After: pet.ID - 1, Limit: 5})
				durations[w] = append(durations[w], time.Since(start))
				if err != nil || len(page) == 0 || page[0] != pet {
					t.Errorf("List after %d right after its Add = %+v, %v; want %+v first", pet.ID-1, page, err, pet)
					return
				}
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	return slices.Concat(durations...)
}

// percentile returns the p-th percentile of ds, which it sorts.
func percentile(ds []time.Duration, p int) time.Duration {
	slices.Sort(ds)
	return ds[(len(ds)-1)*p/100].Round(time.Microsecond)
}

// meanWait returns the mean time that the reads of st waited.
func meanWait(st pgstore.ReadStats) time.Duration {
	if st.Waits == 0 {
		return 0
	}
	return (st.WaitTime / time.Duration(st.Waits)).Round(time.Microsecond)
}

// TestReplicaLoadTwoProcesses makes the load of TestLoadTwoProcesses
// through two server processes on a throwaway primary, each reading from
// its hot standby, the clients' requests alternating between them: a
// client's get of its pet goes to either process and must find it. A
// reader that pages with a cursor through a third Store, which reads from
// the standby, must see every pet exactly once. The load test then checks
// every acknowledged pet through both processes, once the maximum lag has
// passed, as docs/replicas.md says a reader on another instance may need.
// PETSTORE_LOAD_CREATES sets the number of creates, 3,000 by default.
func TestReplicaLoadTwoProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping the two-process load test with a standby in -short mode; run go test without -short for it")
	}
	r := pgReplicated(t)
	schema := pgMigratedSchema(t, r.pool)
	reader := r.storeVia(t, r.replicaPool, schema)
	creates := 3000
	if os.Getenv(loadtest.EnvCreates) != "" {
		creates = loadtest.Creates(t)
	}
	loadTwoProcesses(t, reader, pgNew(t, r.pool, pgstore.WithSchema(schema)), schema,
		loadtest.Config{Clients: 16, Creates: creates, Settle: pgstore.DefaultReplicaMaxLag + pgstore.ReplicaCheckInterval},
		pgtest.URLVar+"="+r.primary.URL(), loadReplicaVar+"="+r.standby.URL())
	t.Logf("the paging reader's reads: %+v", reader.ReadStats())
	if st := reader.ReadStats(); st.Replica == 0 {
		t.Errorf("the paging reader read nothing from the standby: %+v", st)
	}
}

// TestReplicaNotServing gives Stores on a primary replicas that must not
// serve, and checks that no read fails, and none sees another database's
// pets. A replica whose role may not read the table fails every read,
// which the primary serves, counted as a fallback. A hot standby of another
// database of the primary's cluster, or of another cluster, each holding a
// pet of the same ID as the primary's under another name, is refused with
// an error naming both databases, while the primary's own standby serves.
// A replica that stops being the primary's, behind the same URL, is refused
// at the next check. A promoted standby, which no longer follows the
// primary, is left for the primary.
func TestReplicaNotServing(t *testing.T) {
	r := pgReplicated(t)
	other := pgtest.NewCluster(t)
	other.Start(t)
	otherStandby := other.NewStandby(t)
	otherStandby.Start(t)
	ctx := context.Background()
	pgExec(t, r.pool, `CREATE DATABASE foreign_db`)

	schema := pgMigratedSchema(t, r.pool)
	owner := pgNew(t, r.pool, pgstore.WithSchema(schema))
	mine := pgAdd(t, owner, petstore.NewPet{Name: "mine", CategoryID: 1})
	awaitReplayed(t, r.replicaPool, owner.Table(), mine.ID)

	t.Run("reads that fail", func(t *testing.T) {
		pgExec(t, r.pool, `CREATE ROLE pgstore_no_select LOGIN`)
		s := r.storeVia(t, urlPool(t, r.standby.URL(), func(c *pgxpool.Config) { c.ConnConfig.User = "pgstore_no_select" }), schema)
		before := s.ReadStats()
		checkGet(t, s, mine)
		awaitServing(t, s, true) // a check found it answering again
		checkListed(t, s, mine)
		if got := s.ReadStats(); got.Fallback-before.Fallback != 2 || got.Replica != before.Replica {
			t.Errorf("after a Get and a List that the replica refused: %d fallbacks and %d reads on the replica; want 2 and 0",
				got.Fallback-before.Fallback, got.Replica-before.Replica)
		}
	})

	// The same table, holding a pet of the same ID, in the other database
	// of the primary's cluster and in the other cluster.
	foreign := func(primary, standby string) string {
		s := pgMigrate(t, pgNew(t, urlPool(t, primary), pgstore.WithSchema(schema)))
		pet, _, err := s.Add(ctx, petstore.NewPet{Name: "FOREIGN", CategoryID: 2}, petstore.AddOptions{})
		if err != nil || pet.ID != mine.ID {
			t.Fatalf("the foreign pet: %+v, %v; want ID %d", pet, err, mine.ID)
		}
		awaitReplayed(t, urlPool(t, standby), s.Table(), pet.ID)
		return standby
	}
	inDB := func(url, db string) string { return strings.Replace(url, "/postgres?", "/"+db+"?", 1) }
	systemOf := func(url string) string {
		var id int64
		must(t, urlPool(t, url).QueryRow(ctx, `SELECT system_identifier FROM pg_control_system()`).Scan(&id))
		return fmt.Sprint(id)
	}
	mineSystem, otherSystem := systemOf(r.primary.URL()), systemOf(other.URL())

	for _, c := range []struct {
		name, url string
		want      []string // in the replica's error, nothing when it serves
	}{
		{"standby of the primary's database", r.standby.URL(), nil},
		{"another database of the primary's standby", foreign(inDB(r.primary.URL(), "foreign_db"), inDB(r.standby.URL(), "foreign_db")),
			[]string{`another database of the primary's cluster`, `"foreign_db"`, `"postgres"`, mineSystem}},
		{"standby of another cluster", foreign(other.URL(), otherStandby.URL()),
			[]string{"not a copy of the primary", otherSystem, mineSystem}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := pgNew(t, r.pool, pgstore.WithSchema(schema), pgstore.WithReplicas(urlPool(t, c.url)))
			t.Cleanup(s.Close)
			st := awaitReplica(t, s, "the replica to be checked", func(st pgstore.ReplicaStatus) bool { return st.Serving || st.Err != nil })
			switch {
			case c.want == nil && (!st.Serving || st.Err != nil):
				t.Errorf("the standby's status = %+v; want serving", st)
			case c.want != nil && (st.Serving || st.Err == nil):
				t.Fatalf("the replica's status = %+v; want refused", st)
			}
			for _, w := range c.want {
				if !strings.Contains(st.Err.Error(), w) {
					t.Errorf("the replica's error %q does not say %q", st.Err, w)
				}
			}
			before := s.ReadStats()
			checkGet(t, s, mine)
			if got, err := s.List(ctx, petstore.ListOptions{}); err != nil || !slices.Equal(got, []petstore.Pet{mine}) {
				t.Errorf("List = %+v, %v; want the primary's %+v alone", got, err, mine)
			}
			wantReplica := int64(0)
			if c.want == nil {
				wantReplica = 2
			}
			if got := s.ReadStats().Replica - before.Replica; got != wantReplica {
				t.Errorf("%d reads were served by the replica; want %d", got, wantReplica)
			}
		})
	}

	t.Run("the server behind the URL changes", func(t *testing.T) {
		ports := [2]uint16{urlPool(t, r.standby.URL()).Config().ConnConfig.Port, urlPool(t, otherStandby.URL()).Config().ConnConfig.Port}
		var moved atomic.Bool
		pool := urlPool(t, r.standby.URL(), func(c *pgxpool.Config) {
			c.BeforeConnect = func(_ context.Context, cc *pgx.ConnConfig) error {
				cc.Port = ports[0]
				if moved.Load() {
					cc.Port = ports[1]
				}
				return nil
			}
		})
		s := pgNew(t, r.pool, pgstore.WithSchema(schema), pgstore.WithReplicas(pool))
		t.Cleanup(s.Close)
		awaitServing(t, s, true)
		moved.Store(true)
		pool.Reset() // the next connection reaches the other cluster's standby
		st := awaitServing(t, s, false)
		if st.Err == nil || !strings.Contains(st.Err.Error(), "not a copy of the primary") {
			t.Errorf("the replica's status once its URL leads elsewhere = %+v; want refused as not a copy of the primary", st)
		}
		checkGet(t, s, mine)
	})

	t.Run("promoted", func(t *testing.T) {
		s := r.storeVia(t, r.replicaPool, schema)
		r.standby.Promote(t)
		st := awaitServing(t, s, false)
		if st.Err == nil || !strings.Contains(st.Err.Error(), "not a standby") {
			t.Errorf("the promoted replica's status = %+v; want an error saying it is not a standby", st)
		}
		before := s.ReadStats()
		pet := pgAdd(t, s, petstore.NewPet{Name: "after the promotion", CategoryID: 1})
		checkGet(t, s, pet)
		checkListed(t, s, pet)
		if got := s.ReadStats(); got.Primary-before.Primary != 2 || got.Replica != before.Replica {
			t.Errorf("after the promotion, %d reads went to the primary and %d to the replica; want 2 and 0", got.Primary-before.Primary, got.Replica-before.Replica)
		}
	})
}

// awaitReplayed waits until the standby at the end of pool holds the pet
// with the given ID in table.
func awaitReplayed(t *testing.T, pool *pgxpool.Pool, table string, id int64) {
	t.Helper()
	pgAwait(t, pool, "the standby to replay the table", `SELECT to_regclass($1) IS NOT NULL`, table)
	pgAwait(t, pool, "the standby to replay the pet", `SELECT EXISTS (SELECT FROM `+table+` WHERE id = $1)`, id)
}

// awaitReplica waits until the status of the Store's first replica meets
// cond (see eventually), and returns it.
func awaitReplica(t *testing.T, s *pgstore.Store, what string, cond func(pgstore.ReplicaStatus) bool) pgstore.ReplicaStatus {
	t.Helper()
	var st pgstore.ReplicaStatus
	eventually(t, what, func() bool {
		st = s.ReadStats().Replicas[0]
		return cond(st)
	})
	return st
}

// awaitServing waits until the Store's first replica serves, or does not,
// as want says, and returns its status.
func awaitServing(t *testing.T, s *pgstore.Store, want bool) pgstore.ReplicaStatus {
	t.Helper()
	return awaitReplica(t, s, fmt.Sprintf("the replica's Serving to be %v", want), func(st pgstore.ReplicaStatus) bool { return st.Serving == want })
}
