package petstoretest

import (
	"testing"

	"github.com/petstore-go/petstore"
)

// OpenFunc opens a Store on one set of data; close releases it (it must
// wait for or end the calls in flight).
type OpenFunc func(t *testing.T) (store petstore.Store, close func() error)

// TestDurability tests a petstore.Store that can be closed and opened again
// on the same data, a file or a database, for what TestStore cannot see:
// that pets (every field), IDs and idempotency keys survive a reopen, that
// IDs are never reused after one, and that an Add cancelled or interrupted
// by the close has stored all or nothing. It runs each clause as a subtest,
// named after the clause, and a failure names the sentence of the clause
// that the store broke, as TestStore's do. Run TestStore on the store too:
// TestDurability checks only what a reopen can break.
//
// newData returns a new, empty set of data (a new file, a new table) and
// the function that opens a Store on it; the suite opens, closes and opens
// again. Each subtest, one after another, calls newData once and then open
// and close several times, never with two stores open at once. open may use
// t to register cleanup; the subtest closes the store that is open when it
// ends. close must return only when no call that started before it can
// still store anything: it waits for the calls in flight or ends them, and
// either way each of them then has stored its pet with its idempotency key,
// or neither. Calls that reach a store after its close has returned must
// return an error. An error from close fails the subtest.
//
// One clause starts many keyed Adds at once, cancels the contexts of some
// of them while they run and closes the store while others are in flight.
// Then it opens the store again and requires, of each Add that returned a
// pet, that the pet is there and that a keyed retry replays it; of each that
// failed, that a keyed retry replays a pet with exactly its values or
// creates one, and that exactly one pet then has its name. A store may
// report an error for an Add that it stored only when it cannot know (the
// Store contract allows that when ctx ended or the connection broke): this
// clause accepts both outcomes, but not half of one.
func TestDurability(t *testing.T, newData func(t *testing.T) OpenFunc) {
	t.Helper()
	for _, c := range durabilityCases {
		runClause(t, c.name, c.clause, func(r reporter) {
			t := r.(*testing.T)
			open := newData(t)
			if open == nil {
				t.Fatal("petstoretest: newData returned a nil OpenFunc")
			}
			c.run(r, func() (petstore.Store, func() error) { return open(t) })
		})
	}
}

// A durabilityCase is one clause of what a durable store keeps across a
// reopen, and the test that enforces it.
type durabilityCase struct {
	name   string // the subtest's name
	clause string // the sentence that the test enforces
	test   func(dt *durableT)
}

// run runs the clause on the set of data that open opens, which must be
// new and empty.
func (c durabilityCase) run(r reporter, open func() (petstore.Store, func() error)) {
	dt := &durableT{storeT: &storeT{t: r, ctx: r.Context()}, open: open}
	defer dt.closeAtEnd()
	dt.openStore()
	dt.requireEmpty()
	c.test(dt)
}

// durableT is the state of one clause of TestDurability: a storeT whose
// store can be closed and opened again.
type durableT struct {
	*storeT
	open  func() (petstore.Store, func() error)
	close func() error // the open store's close; nil when none is open
	opens int          // how many times the store was opened
}

// openStore opens the store and stops the subtest when open returns nil.
func (dt *durableT) openStore() {
	s, closeFn := dt.open()
	if s == nil || closeFn == nil {
		dt.t.Fatalf("the OpenFunc returned a nil Store or close function (open %d)", dt.opens+1)
	}
	dt.s, dt.close = s, closeFn
	dt.opens++
}

// closeStore closes the open store and stops the subtest when close fails.
func (dt *durableT) closeStore() {
	closeFn := dt.close
	dt.close = nil
	if err := closeFn(); err != nil {
		dt.t.Fatalf("closing the store (open %d): %v", dt.opens, err)
	}
}

// reopen closes the store and opens it again on the same data.
func (dt *durableT) reopen() {
	dt.closeStore()
	dt.openStore()
}

// closeAtEnd closes the store that is open when the subtest ends.
func (dt *durableT) closeAtEnd() {
	if dt.close != nil {
		if err := dt.close(); err != nil {
			dt.t.Errorf("closing the store at the end of the clause: %v", err)
		}
	}
}
