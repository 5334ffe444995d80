package pgstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/petstore-go/petstore/internal/wake"
)

// Defaults of the replica options.
const (
	// DefaultReplicaWait is how long a read waits for a replica to show
	// the Store's last pet, unless WithReplicaWait chooses another time.
	DefaultReplicaWait = 5 * time.Millisecond
	// DefaultReplicaMaxLag is how far a replica may lag behind the primary
	// and still serve reads, unless WithReplicaMaxLag chooses another
	// bound.
	DefaultReplicaMaxLag = time.Second
	// ReplicaCheckInterval is how often a Store with replicas checks each
	// of them: whether it answers, is still a standby of the primary's
	// database, and how far it lags.
	ReplicaCheckInterval = 100 * time.Millisecond
)

// WithReplicas gives the Store read pools on hot standbys of its primary:
// Get and List are served by them, in turn, while Add, the idempotency
// keys, Migrate and Check stay on the primary, the pool given to New. The
// caller owns the pools, as it owns the primary's. By default a Store reads
// from the primary alone.
//
// The petstore.Store contract holds: a pet that this Store's Add returned
// is seen at once by this Store's Get and List, a Get never answers
// petstore.ErrNotFound for a pet that exists because a replica lags, and a
// replica that is unreachable, lags past WithReplicaMaxLag or was promoted
// is skipped without failing a read. A reader on another Store, in another
// process, sees every pet whose Add returned more than the maximum lag
// before its read began; see docs/replicas.md for what it may miss.
//
// New then starts a goroutine that checks each replica every
// ReplicaCheckInterval, until Close. A replica serves only once a check has
// found it to be a copy of the primary's own database: a server of the
// same cluster (the system identifier of pg_control_system) connected to
// the database of the same OID. Any other is refused, with an error in
// ReadStats that names both databases.
func WithReplicas(pools ...*pgxpool.Pool) Option {
	return optionFunc(func(c *config) error {
		for i, p := range pools {
			if p == nil {
				return fmt.Errorf("WithReplicas: pool %d of %d is nil; open each with pgxpool.New", i+1, len(pools))
			}
		}
		c.replicas = pools
		return nil
	})
}

// WithReplicaWait sets how long a read on a replica waits, at most, for
// the replica to replay the last pet that this Store's Add returned, before
// it is served by the primary instead and counted as a fallback. The
// default is DefaultReplicaWait, 5 ms; 0 sends such a read to the primary
// at once.
func WithReplicaWait(d time.Duration) Option {
	return optionFunc(func(c *config) error {
		if d < 0 {
			return fmt.Errorf("WithReplicaWait: %v is negative; use a wait such as %v, or 0 not to wait", d, DefaultReplicaWait)
		}
		c.replicaWait = d
		return nil
	})
}

// WithReplicaMaxLag sets how far a replica may lag behind the primary and
// still serve reads: a replica is used only while its last check showed
// that it had replayed every commit made before this bound. This is the
// most that a reader may miss of the pets that other Stores added. The
// default is DefaultReplicaMaxLag, 1 s; it must be longer than
// ReplicaCheckInterval, or no replica would ever be used.
func WithReplicaMaxLag(d time.Duration) Option {
	return optionFunc(func(c *config) error {
		if d <= ReplicaCheckInterval {
			return fmt.Errorf("WithReplicaMaxLag: %v is not longer than ReplicaCheckInterval (%v); use a bound such as %v",
				d, ReplicaCheckInterval, DefaultReplicaMaxLag)
		}
		c.replicaMaxLag = d
		return nil
	})
}

// ReadStats tells how a Store's reads were served and how its replicas
// fare. Reads are counted only when the Store has replicas.
type ReadStats struct {
	// Replica counts the reads served by a replica; Primary those served by
	// the primary because no replica could (unreachable, lagging past the
	// maximum lag, or promoted); Fallback those tried on a replica and then
	// served by the primary (the replica had not replayed this Store's last
	// pet within the wait, could not tell that a pet does not exist, or
	// failed).
	Replica, Primary, Fallback int64
	// Waits counts the reads that waited for a replica to replay this
	// Store's last pet, and WaitTime is the total time they waited.
	Waits    int64
	WaitTime time.Duration
	// Replicas describes each replica, in the order given to WithReplicas,
	// as of its last check.
	Replicas []ReplicaStatus
}

// ReplicaStatus describes a replica as of its last check.
type ReplicaStatus struct {
	Name    string // "host:port/database": never a password
	Serving bool   // whether reads go to the replica
	// Lag is how far the replica lags: it has replayed every commit that
	// the primary made Lag ago. It keeps growing while the replica is
	// unreachable, and is zero before the first check. LagBytes is how much
	// of the primary's WAL it had yet to replay.
	Lag      time.Duration
	LagBytes int64
	// Err says why the replica does not serve (unreachable, no longer a
	// standby, not a copy of the primary's database); nil when it serves.
	Err error
}

// ReadStats returns how the Store's reads were served and how its
// replicas fare.
func (s *Store) ReadStats() ReadStats {
	rs := s.replicas
	if rs == nil {
		return ReadStats{}
	}
	st := ReadStats{
		Replica:  rs.replicaReads.Load(),
		Primary:  rs.primaryReads.Load(),
		Fallback: rs.fallbacks.Load(),
		Waits:    rs.waits.Load(),
		WaitTime: time.Duration(rs.waited.Load()),
	}
	now := time.Now()
	for _, r := range rs.members {
		status := ReplicaStatus{Name: r.name}
		if c := r.state.Load(); c != nil {
			status.Serving = rs.serving(r, c, now)
			status.Lag = now.Sub(c.caughtUp)
			status.LagBytes, status.Err = c.lagBytes, c.err
		}
		st.Replicas = append(st.Replicas, status)
	}
	return st
}

// Close stops the checks of the replicas that New started for
// WithReplicas; reads then go to the primary once the replicas' last
// checks are older than the maximum lag. Close closes no pool. A Store
// without replicas needs no Close.
func (s *Store) Close() {
	if rs := s.replicas; rs != nil {
		rs.stop()
		<-rs.done // closed: a second Close returns at once
	}
}

// A replicaSet is a Store's replicas and what it knows of them.
type replicaSet struct {
	members []*replica
	wait    time.Duration
	maxLag  time.Duration

	next    atomic.Uint32 // turns the reads among the replicas
	written wake.Highest  // the highest ID that the Store's Add returned

	replicaReads, primaryReads, fallbacks, waits atomic.Int64
	waited                                       atomic.Int64 // nanoseconds

	stop context.CancelFunc
	done chan struct{}

	// Read and written by the checks alone: the primary's recent WAL
	// samples, oldest first, and its database as last read (nil before it
	// answered).
	samples []walSample
	origin  *database
}

// A replica is a read pool and the outcome of its last check.
type replica struct {
	pool  *pgxpool.Pool
	name  string
	state atomic.Pointer[replicaCheck] // nil until the first check
	// failed is set when a read on the replica fails, so that reads skip
	// it until a check finds it answering again.
	failed atomic.Bool
}

// A replicaCheck is what a check found.
type replicaCheck struct {
	caughtUp time.Time // every commit made on the primary before it is replayed
	lagBytes int64
	err      error // why the replica cannot serve; nil when it can
}

// newReplicaSet returns the replicas of c, checked every
// ReplicaCheckInterval from a goroutine that runs until Close.
func newReplicaSet(primary *pgxpool.Pool, c config) *replicaSet {
	ctx, stop := context.WithCancel(context.Background())
	rs := &replicaSet{wait: c.replicaWait, maxLag: c.replicaMaxLag, stop: stop, done: make(chan struct{})}
	for _, p := range c.replicas {
		cc := p.Config().ConnConfig
		name := cc.Host + ":" + strconv.Itoa(int(cc.Port)) + "/" + cc.Database
		rs.members = append(rs.members, &replica{pool: p, name: name})
	}
	go rs.run(ctx, primary)
	return rs
}

// wrote records that the Store's Add returned the pet with the given ID;
// without replicas (rs nil) it does nothing.
func (rs *replicaSet) wrote(id int64) {
	if rs != nil {
		rs.written.Raise(id)
	}
}

// serving reports whether r, whose last check is c, may serve a read now.
func (rs *replicaSet) serving(r *replica, c *replicaCheck, now time.Time) bool {
	return c.err == nil && !r.failed.Load() && now.Sub(c.caughtUp) <= rs.maxLag
}

// pick returns the next replica that may serve a read, or nil.
func (rs *replicaSet) pick() *replica {
	n := uint32(len(rs.members))
	start := rs.next.Add(1)
	now := time.Now()
	for i := range n {
		r := rs.members[(start+i)%n]
		if c := r.state.Load(); c != nil && rs.serving(r, c, now) {
			return r
		}
	}
	return nil
}

// A replicaOutcome is what a replica's answer to a read is worth.
type replicaOutcome int

const (
	answered replicaOutcome = iota // the answer is the read's
	behind                         // the replica has yet to replay the Store's last pet; it may soon
	unsure                         // the replica cannot tell; the primary must
)

// read calls try on a replica that may serve the read, waiting up to
// rs.wait while the replica is behind, and reports whether the replica
// answered; when it did not, or there are no replicas (rs nil), the caller
// reads from the primary. own, given to try, is the highest ID that the
// Store's Add had returned when the read began: the answer counts only if
// the replica's snapshot holds that pet. read fails only when ctx is done.
func (rs *replicaSet) read(ctx context.Context, try func(ctx context.Context, pool *pgxpool.Pool, own int64) (replicaOutcome, error)) (bool, error) {
	if rs == nil {
		return false, nil
	}
	r := rs.pick()
	if r == nil {
		rs.primaryReads.Add(1)
		return false, nil
	}
	own := rs.written.Load()
	var waitStart time.Time
	defer func() {
		if !waitStart.IsZero() {
			rs.waits.Add(1)
			rs.waited.Add(int64(time.Since(waitStart)))
		}
	}()
	for pause := 100 * time.Microsecond; ; pause = min(2*pause, time.Millisecond) {
		out, err := try(ctx, r.pool, own)
		switch {
		case err != nil && ctx.Err() != nil:
			return false, err
		case err != nil:
			r.failed.Store(true) // until a check finds it answering
		case out == answered:
			rs.replicaReads.Add(1)
			return true, nil
		case out == behind:
			if waitStart.IsZero() {
				waitStart = time.Now()
			}
			if time.Since(waitStart)+pause <= rs.wait {
				select {
				case <-time.After(pause): // collected once fired or dropped
					continue
				case <-ctx.Done():
					return false, ctx.Err()
				}
			}
		}
		rs.fallbacks.Add(1)
		return false, nil
	}
}

// run checks the replicas every ReplicaCheckInterval until ctx is done.
func (rs *replicaSet) run(ctx context.Context, primary *pgxpool.Pool) {
	defer close(rs.done)
	tick := time.NewTicker(ReplicaCheckInterval)
	defer tick.Stop()
	for {
		rs.check(ctx, primary)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// A walSample is the primary's WAL position at a time: every commit
// made before the time ends at or before the position.
type walSample struct {
	at  time.Time
	lsn int64
}

// A database is a database of a PostgreSQL cluster, as a server at the
// end of a pool says it is: a physical standby holds the very databases of
// its primary, under the same OIDs, and its cluster has the same system
// identifier, which initdb draws at random.
type database struct {
	system int64 // pg_control_system().system_identifier
	oid    int64
	name   string
}

func (d *database) String() string {
	return fmt.Sprintf("the database %q (OID %d) of the cluster with system identifier %d", d.name, d.oid, d.system)
}

// databaseSQL names the database at the end of a connection, in the
// columns that follow others in a check's query.
const databaseSQL = `, c.system_identifier, d.oid::int8, d.datname
FROM pg_control_system() c, pg_database d WHERE d.datname = current_database()`

// check reads the primary's WAL position and which database it is, then
// asks each replica whether it is still a standby of that database and how
// much WAL it has replayed, and records what it found. A replica that has
// replayed the position of a sample has every commit made before that
// sample's time, so its lag is at most the time since then.
func (rs *replicaSet) check(ctx context.Context, primary *pgxpool.Pool) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second) // bounds the statements of one check
	defer cancel()
	at := time.Now()
	var (
		lsn int64
		db  database
	)
	err := primary.QueryRow(ctx, `SELECT (pg_current_wal_lsn() - '0/0')::int8`+databaseSQL).Scan(&lsn, &db.system, &db.oid, &db.name)
	if err == nil {
		rs.samples = append(rs.samples, walSample{at, lsn})
		rs.origin = &db
	}
	// Keep the samples that can still tell a lag within twice the bound.
	old := 0
	for old < len(rs.samples)-1 && at.Sub(rs.samples[old].at) > 2*rs.maxLag {
		old++
	}
	rs.samples = rs.samples[old:]

	var wg sync.WaitGroup
	for _, r := range rs.members {
		wg.Go(func() { r.state.Store(rs.checkOne(ctx, r)) })
	}
	wg.Wait()
}

// checkOne checks one replica against the primary's samples and database.
func (rs *replicaSet) checkOne(ctx context.Context, r *replica) *replicaCheck {
	c := &replicaCheck{}
	if prev := r.state.Load(); prev != nil {
		c.caughtUp = prev.caughtUp
	}
	var (
		recovering bool
		replayed   *int64
		db         database
	)
	err := r.pool.QueryRow(ctx, `SELECT pg_is_in_recovery(), (pg_last_wal_replay_lsn() - '0/0')::int8`+databaseSQL).
		Scan(&recovering, &replayed, &db.system, &db.oid, &db.name)
	switch {
	case err != nil:
		c.err = wrapError(ctx, "check replica "+r.name, err)
	case rs.origin == nil:
		c.err = errors.New("pgstore: replica " + r.name + " is not used until the primary answers and says which database it is")
	case db.system != rs.origin.system:
		c.err = fmt.Errorf("pgstore: replica %s is not a copy of the primary: it serves %v; the primary serves %v", r.name, &db, rs.origin)
	case db.oid != rs.origin.oid:
		c.err = fmt.Errorf("pgstore: replica %s serves another database of the primary's cluster: %v; the primary serves %v", r.name, &db, rs.origin)
	case !recovering:
		c.err = errors.New("pgstore: replica " + r.name + " is not a standby (pg_is_in_recovery() is false): it was promoted, or is another primary")
	case replayed == nil:
		c.err = errors.New("pgstore: replica " + r.name + " has replayed no WAL yet")
	}
	if c.err != nil {
		return c
	}
	for i := len(rs.samples) - 1; i >= 0; i-- {
		if rs.samples[i].lsn <= *replayed {
			if rs.samples[i].at.After(c.caughtUp) {
				c.caughtUp = rs.samples[i].at
			}
			break
		}
	}
	if len(rs.samples) > 0 {
		c.lagBytes = max(0, rs.samples[len(rs.samples)-1].lsn-*replayed)
	}
	r.failed.Store(false)
	return c
}
