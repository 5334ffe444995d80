package memstore

// KeysHeld returns the number of idempotency keys that s holds in its map
// and in its queue of keys to forget.
func KeysHeld(s *Store) (mapped, queued int) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.keys), len(s.queue)
}
