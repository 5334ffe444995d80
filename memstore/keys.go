package memstore

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/petstore-go/petstore"
)

// How keys are forgotten.
//
// Keys are kept in a map, for lookup, and in a queue in the order in which
// they were stored, which is also the order in which they expire. Once
// pruneInterval has passed since the last pass began, a new pass begins:
// each Add then drops up to pruneStep expired keys from the front of the
// queue, until the front has not expired. So no Add does more than a few
// steps of work however many keys expire at once, a pass keeps ahead of the
// keys that arrive (each Add stores at most one), and the keys held stay
// within those of the last retention and pruneInterval.
const (
	pruneInterval = time.Minute
	pruneStep     = 4
)

// idempotencyKey is an idempotency key in the scope of its principal.
type idempotencyKey struct{ principal, key string }

// storedKey is where a key's pet is, and when the key was stored, in
// nanoseconds of the store's clock.
type storedKey struct {
	id int64
	at int64
}

// queuedKey is a key in the queue of keys to forget.
type queuedKey struct {
	key idempotencyKey
	storedKey
}

// keys are the idempotency keys of a Store. Its zero value holds none.
type keys struct {
	byKey map[idempotencyKey]storedKey
	// queue holds the keys in the order stored, the oldest first. Popping
	// reslices it, and append moves the rest to a new array once the old one
	// is used up, so its memory stays within a few times the keys held.
	queue []queuedKey

	pruning   bool  // a pass is running
	passStart int64 // when the last pass began
	passN     int64 // keys the running pass has dropped
	pruned    int64 // keys dropped, ever
}

// lookup returns the ID of the pet stored under k, unless k is unknown or
// has expired at now.
func (ks *keys) lookup(k idempotencyKey, now int64, retention time.Duration) (int64, bool) {
	sk, ok := ks.byKey[k]
	if !ok || now-sk.at > int64(retention) {
		return 0, false
	}
	return sk.id, true
}

// add stores k for the pet with the given ID at now. The key's text is
// copied, so that the key does not hold on to a larger string it came from
// (a request's header, say).
func (ks *keys) add(k idempotencyKey, id, now int64) {
	if ks.byKey == nil {
		ks.byKey = make(map[idempotencyKey]storedKey)
	}
	k.key = strings.Clone(k.key)
	sk := storedKey{id: id, at: now}
	ks.byKey[k] = sk
	ks.queue = append(ks.queue, queuedKey{key: k, storedKey: sk})
}

// prune runs one step of pruning at now: it begins a pass if pruneInterval
// has passed since the last one began, and drops up to pruneStep expired
// keys from the front of the queue. It returns the number of keys that a
// pass that ended in this step dropped, or -1 when no pass that dropped any
// ended.
func (ks *keys) prune(now int64, retention time.Duration) int64 {
	if !ks.pruning {
		if len(ks.queue) == 0 || now-ks.passStart < int64(pruneInterval) {
			return -1
		}
		ks.pruning, ks.passStart, ks.passN = true, now, 0
	}
	for range pruneStep {
		if len(ks.queue) == 0 || now-ks.queue[0].at <= int64(retention) {
			ks.pruning = false
			if ks.passN == 0 {
				return -1
			}
			return ks.passN
		}
		q := ks.queue[0]
		if sk, ok := ks.byKey[q.key]; ok && sk.id == q.id { // not stored again since
			delete(ks.byKey, q.key)
		}
		ks.queue[0] = queuedKey{} // let the key's text go
		ks.queue = ks.queue[1:]
		ks.passN++
		ks.pruned++
	}
	return -1
}

// keyRetention returns the key retention, with its default.
func (s *Store) keyRetention() time.Duration {
	if s.retention == 0 {
		return petstore.MinKeyRetention
	}
	return s.retention
}

// clock returns the time now by the store's clock, in nanoseconds since
// the store first read it. With time.Now, that is monotonic time: a change
// of the wall clock neither forgets keys early nor keeps them for ever. The
// caller holds s.mu for writing.
func (s *Store) clock() int64 {
	now := time.Now
	if s.now != nil {
		now = s.now
	}
	t := now()
	if s.epoch.IsZero() {
		s.epoch = t
	}
	return int64(t.Sub(s.epoch))
}

// pruneKeys runs one step of pruning, and logs the end of a pass. The
// caller holds s.mu for writing.
func (s *Store) pruneKeys(now int64) {
	n := s.keys.prune(now, s.keyRetention())
	if n < 0 || s.log == nil {
		return
	}
	s.log.LogAttrs(context.Background(), slog.LevelDebug, "memstore: forgot idempotency keys past their retention",
		slog.Int64("forgotten", n), slog.Int("held", len(s.keys.byKey)), slog.Duration("retention", s.keyRetention()))
}

// PrunedKeys returns the number of idempotency keys that the store has
// forgotten, their retention (see WithKeyRetention) having passed.
func (s *Store) PrunedKeys() int64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.keys.pruned
}
