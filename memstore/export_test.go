package memstore

// KeysHeld returns the number of idempotency keys that s holds in its map
// and in its queue of keys to forget, and the capacity of the queue.
func KeysHeld(s *Store) (mapped, queued, capacity int) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, c := range s.keys.queue {
		capacity += cap(c)
	}
	mapped, queued = s.keys.held()
	return mapped, queued, capacity
}
