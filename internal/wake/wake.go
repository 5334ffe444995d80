// Package wake keeps the wake functions that a store's callers gave to
// NotifyAdds (see petstore.AddNotifier), and runs the store's listener
// while any caller is left. Its Highest, the highest ID seen, serves the
// stores and the handler's watch reader alike.
package wake

import (
	"context"
	"sync"
	"sync/atomic"
)

// A Set holds wake functions, each until its caller's context is done. Its
// zero value is an empty Set ready to use.
type Set struct {
	woken Highest // the highest ID woken for

	mu   sync.Mutex
	next int
	fns  map[int]func()
	stop context.CancelFunc // ends the listener that runs while fns is not empty
}

// Add calls fn at every Wake until ctx is done. When the Set was empty and
// listen is not nil, Add starts listen in a goroutine, with a context that
// ends once the Set is empty again: a store's listener for the adds of
// other processes, which calls Wake.
func (s *Set) Add(ctx context.Context, fn func(), listen func(context.Context)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fns == nil {
		s.fns = map[int]func(){}
	}
	id := s.next
	s.next++
	s.fns[id] = fn
	if len(s.fns) == 1 && listen != nil {
		lctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		s.stop = cancel
		go listen(lctx)
	}
	context.AfterFunc(ctx, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		delete(s.fns, id)
		if len(s.fns) == 0 && s.stop != nil {
			s.stop()
			s.stop = nil
		}
	})
}

// AddedHere calls every function of the Set for the store's own add of
// pets up to the ID id, always, before the add returns, and records id so
// that Added does not wake again for it.
func (s *Set) AddedHere(id int64) {
	s.woken.Raise(id)
	s.Wake()
}

// Added calls every function of the Set for pets added up to the ID id,
// that a listener heard of, unless it has done so for id or a higher ID
// already: a store whose IDs become visible in ascending order wakes once
// for its own add and the notification of it that reaches it again.
func (s *Set) Added(id int64) {
	if s.woken.Raise(id) {
		s.Wake()
	}
}

// Wake calls every function of the Set.
func (s *Set) Wake() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, fn := range s.fns {
		fn()
	}
}

// A Highest holds the highest ID recorded in it, 0 before any, which Load
// returns. Its zero value is ready to use.
type Highest struct{ atomic.Int64 }

// Raise records id and reports whether it is above every ID recorded before.
func (h *Highest) Raise(id int64) bool {
	for old := h.Load(); id > old; old = h.Load() {
		if h.CompareAndSwap(old, id) {
			return true
		}
	}
	return false
}
