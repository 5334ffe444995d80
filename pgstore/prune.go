package pgstore

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// Pruning: the keys of a Store's table are forgotten once their retention
// has passed, in passes of statements that each delete the oldest expired
// keys, at most pruneStep of them, so that no statement holds many row locks
// or runs long and creates never wait for it. A key past its retention that
// is not yet deleted is still answered. Every Store prunes its table,
// skipping the rows another Store is deleting.
const (
	pruneEvery   = time.Minute      // the least time, on the Store's clock, between the starts of two passes
	pruneStep    = 1000             // the most keys that one statement deletes
	pruneTimeout = 30 * time.Second // bounds each statement
)

// A pruner runs the passes that delete a Store's expired keys, one at a
// time.
type pruner struct {
	mu      sync.Mutex
	running bool
	last    time.Time    // the Store's clock when the last pass started
	pruned  atomic.Int64 // keys deleted, in total
}

// PrunedKeys returns the number of idempotency keys that this Store has
// deleted because their retention had passed. Other Stores on the same
// table prune too, and count their own.
func (s *Store) PrunedKeys() int64 { return s.prune.pruned.Load() }

// maybePrune starts a pass in a goroutine of its own, unless one is
// running or the last one started less than pruneEvery ago on the Store's
// clock. insert calls it after each batch, so a Store that adds nothing
// prunes nothing (and its keys do not grow).
func (s *Store) maybePrune() {
	p := &s.prune
	p.mu.Lock()
	defer p.mu.Unlock()
	if now := s.opt.Now(); !p.running && (p.last.IsZero() || now.Sub(p.last) >= pruneEvery) {
		p.running, p.last = true, now
		go s.prunePass(now)
	}
}

// prunePass deletes the keys stored before now less the retention, until a
// statement finds fewer than pruneStep, and logs what it did.
func (s *Store) prunePass(now time.Time) {
	defer func() {
		s.prune.mu.Lock()
		s.prune.running = false
		s.prune.mu.Unlock()
	}()
	start := time.Now()
	before := now.Add(-s.opt.KeyRetention)
	var (
		deleted int64
		steps   int
		err     error
	)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), pruneTimeout)
		tag, execErr := s.pool.Exec(ctx, s.pruneSQL, before, pruneStep)
		cancel()
		steps++
		if execErr != nil {
			err = wrapError(context.Background(), "prune idempotency keys", execErr)
			break
		}
		n := tag.RowsAffected()
		deleted += n
		s.prune.pruned.Add(n)
		if n < pruneStep {
			break
		}
	}
	args := []any{"table", s.keys, "deleted", deleted, "steps", steps, "stored_before", before, "took", time.Since(start)}
	if err != nil {
		s.opt.Logger.Warn("pgstore: pruning idempotency keys failed; the next pass retries", append(args, "err", err)...)
		return
	}
	s.opt.Logger.Debug("pgstore: pruned idempotency keys", args...)
}
