// Package faultstore wraps a petstore.Store to inject the failures that a
// real store meets: errors, latency, ErrUnavailable, panics and contexts that
// are done. Tests use it to check how the handler answers a failing store and
// that it recovers once the store heals.
//
// Typical usage inside a test is:
//
//	fs := faultstore.New(memstore.New())
//	fs.Set(faultstore.Add, faultstore.Fault{Err: petstore.ErrUnavailable, Times: 2})
//	h, err := petstore.New(petstore.WithStore(fs), petstore.WithAuthenticator(petstore.APIKeys("key")))
//	// The first two creates answer 503, the third is stored.
//
// A Store is safe for concurrent use; faults may be changed while requests
// are being served.
package faultstore

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/petstore-go/petstore"
)

// Method names a method of petstore.Store.
type Method string

// The methods of petstore.Store.
const (
	Add  Method = "Add"
	Get  Method = "Get"
	List Method = "List"
)

// Methods returns every method of petstore.Store, so that a test can set a
// fault on all of them without listing them.
func Methods() []Method { return []Method{Add, Get, List} }

// A Fault describes what a call to a method does instead of, or before,
// calling the wrapped store. The zero Fault calls the wrapped store.
//
// The parts apply in order: Delay first (cut short, with an error wrapping
// ctx.Err(), when the call's context is done), then Panic, then Err. A Fault
// with neither Panic nor Err calls the wrapped store after the delay.
type Fault struct {
	// Delay is how long the call waits before doing anything else.
	Delay time.Duration
	// Panic, when not nil, is the value the call panics with.
	Panic any
	// Err, when not nil, is returned instead of calling the wrapped store.
	Err error
	// Times is how many calls the fault applies to before it heals by
	// itself; 0 means every call until the fault is changed.
	Times int
}

// Store is a petstore.Store that calls another one, injecting the faults
// that Set installs, and counts the calls that reach it.
type Store struct {
	inner petstore.Store

	mu     sync.Mutex
	faults map[Method]Fault
	calls  map[Method]int
}

var _ petstore.Store = (*Store)(nil)

// New returns a Store that calls inner and injects no fault until Set is
// called.
func New(inner petstore.Store) *Store {
	return &Store{inner: inner, faults: map[Method]Fault{}, calls: map[Method]int{}}
}

// Set installs f for every later call of m, replacing any earlier fault.
// Set(m, Fault{}) removes the fault.
func (s *Store) Set(m Method, f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults[m] = f
}

// Calls returns how many calls of m have reached the Store, faulty or not.
func (s *Store) Calls(m Method) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[m]
}

// TotalCalls returns how many calls of any method have reached the Store.
func (s *Store) TotalCalls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, c := range s.calls {
		n += c
	}
	return n
}

// inject counts a call of m and applies its fault, using up one of its
// Times, and reports whether the call must return err instead of calling
// the wrapped store.
func (s *Store) inject(ctx context.Context, m Method) (bool, error) {
	s.mu.Lock()
	s.calls[m]++
	f := s.faults[m]
	if g := f; g.Times > 0 {
		g.Times--
		s.faults[m] = g
		if g.Times == 0 {
			delete(s.faults, m)
		}
	}
	s.mu.Unlock()
	if f.Delay > 0 {
		select {
		case <-time.After(f.Delay):
		case <-ctx.Done():
			return true, fmt.Errorf("faultstore: %s: %w", m, ctx.Err())
		}
	}
	if f.Panic != nil {
		panic(f.Panic)
	}
	return f.Err != nil, f.Err
}

// Add injects the fault for Add, then calls the wrapped store.
func (s *Store) Add(ctx context.Context, p petstore.NewPet, opts petstore.AddOptions) (petstore.Pet, bool, error) {
	if stop, err := s.inject(ctx, Add); stop {
		return petstore.Pet{}, false, err
	}
	return s.inner.Add(ctx, p, opts)
}

// Get injects the fault for Get, then calls the wrapped store.
func (s *Store) Get(ctx context.Context, id int64) (petstore.Pet, error) {
	if stop, err := s.inject(ctx, Get); stop {
		return petstore.Pet{}, err
	}
	return s.inner.Get(ctx, id)
}

// List injects the fault for List, then calls the wrapped store.
func (s *Store) List(ctx context.Context, opts petstore.ListOptions) ([]petstore.Pet, error) {
	if stop, err := s.inject(ctx, List); stop {
		return nil, err
	}
	return s.inner.List(ctx, opts)
}
