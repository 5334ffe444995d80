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
	// queue holds the keys in the order stored, in chunks of keyChunk:
	// queue[0][head:] is the front. Neither end ever copies the others.
	queue [][]queuedKey
	head  int
	n     int // keys in the queue

	pruning   bool  // a pass is running
	passStart int64 // when the last pass began
	passN     int64 // keys the running pass has dropped
	pruned    int64 // keys dropped, ever
}

// keyChunk is the number of keys in a chunk of the queue.
const keyChunk = 1024

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
	last := len(ks.queue) - 1
	if last < 0 || len(ks.queue[last]) == keyChunk {
		ks.queue = append(ks.queue, make([]queuedKey, 0, keyChunk))
		last++
	}
	ks.queue[last] = append(ks.queue[last], queuedKey{key: k, storedKey: sk})
	ks.n++
}

// front returns the key at the front of the queue, which must not be empty.
func (ks *keys) front() *queuedKey { return &ks.queue[0][ks.head] }

// pop drops the key at the front of the queue, which must not be empty.
func (ks *keys) pop() {
	ks.queue[0][ks.head] = queuedKey{}
	ks.head++
	ks.n--
	if ks.head == keyChunk || ks.n == 0 {
		ks.queue[0] = nil
		ks.queue = ks.queue[1:]
		ks.head = 0
		if ks.n == 0 {
			ks.queue = nil
		}
	}
}

// prune runs one step of pruning at now: it begins a pass if pruneInterval
// has passed since the last one began, and drops up to pruneStep expired
// keys from the front of the queue. It returns the number of keys that a
// pass that ended in this step dropped, or -1 when no pass that dropped any
// ended.
func (ks *keys) prune(now int64, retention time.Duration) int64 {
	if !ks.pruning {
		if ks.n == 0 || now-ks.passStart < int64(pruneInterval) {
			return -1
		}
		ks.pruning, ks.passStart, ks.passN = true, now, 0
	}
	for range pruneStep {
		if ks.n == 0 || now-ks.front().at <= int64(retention) {
			ks.pruning = false
			if ks.passN == 0 {
				return -1
			}
			return ks.passN
		}
		q := ks.front()
		if sk, ok := ks.byKey[q.key]; ok && sk.id == q.id { // not stored again since
			delete(ks.byKey, q.key)
		}
		ks.pop()
		ks.passN++
		ks.pruned++
	}
	return -1
}

// held returns the number of keys in the map and in the queue.
func (ks *keys) held() (mapped, queued int) { return len(ks.byKey), ks.n }

// retention returns the key retention, with its default.
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
	mapped, _ := s.keys.held()
	s.log.LogAttrs(context.Background(), slog.LevelDebug, "memstore: forgot idempotency keys past their retention",
		slog.Int64("forgotten", n), slog.Int("held", mapped), slog.Duration("retention", s.keyRetention()))
}

// PrunedKeys returns the number of idempotency keys that the store has
// forgotten, their retention (see WithKeyRetention) having passed.
func (s *Store) PrunedKeys() int64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.keys.pruned
}
