package petstore

import (
	"net/http"
	"sync"
)

// idempotencyKey returns the request's Idempotency-Key, or "" when it has
// none: 1 to MaxIdempotencyKeyLength visible ASCII characters, sent once.
func idempotencyKey(h http.Header) (string, error) {
	values := h["Idempotency-Key"]
	switch {
	case len(values) == 0:
		return "", nil
	case len(values) > 1:
		return "", invalidParameter("Idempotency-Key is given more than once; give it once")
	}
	key := values[0]
	if key == "" || len(key) > MaxIdempotencyKeyLength {
		return "", invalidParameter(msgKeyLength)
	}
	for i := 0; i < len(key); i++ {
		if c := key[i]; c < 0x21 || c > 0x7e {
			return "", invalidParameter("Idempotency-Key must hold only visible ASCII characters, without spaces")
		}
	}
	return key, nil
}

// runningKeys are the idempotency keys of the creates that one handler is
// running, so that a second request with the same key from the same caller
// is answered 409 instead of waiting on the store. Across processes, the
// store's own guarantee (Store, "Idempotent creates") keeps a key to one pet.
type runningKeys struct {
	mu   sync.Mutex
	keys map[runningKey]struct{}
}

type runningKey struct{ principal, key string }

// claim marks key as running for principal. It reports false when it is
// already running; otherwise the caller must call release once its create
// is over.
func (r *runningKeys) claim(principal, key string) (release func(), ok bool) {
	k := runningKey{principal, key}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, running := r.keys[k]; running {
		return nil, false
	}
	if r.keys == nil {
		r.keys = make(map[runningKey]struct{})
	}
	r.keys[k] = struct{}{}
	return func() {
		r.mu.Lock()
		delete(r.keys, k)
		r.mu.Unlock()
	}, true
}
