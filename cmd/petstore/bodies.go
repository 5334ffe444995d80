package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/petstore-go/petstore"
)

// bodiesPerConn is how many of the places of a bodyGate one connection may
// hold at once: an HTTP/2 connection with many requests sending bodies
// cannot take every place, whatever -max-bodies is.
const bodiesPerConn = 16

// bodyGate bounds the requests with a body that the API handler serves at
// once, across the process, so that the memory their bodies hold has a
// bound however many connections and streams send them. A request takes a
// place before the handler reads its body and gives it back when the
// handler returns.
//
// A request that finds no place waits, at most a given time, and then is
// answered 503. When a place is given back, it goes to a waiting request of
// the caller that holds the fewest places (one that holds none first), and
// among its connections to the one that holds the fewest, so that a caller
// or a connection that holds many cannot keep the others waiting.
type bodyGate struct {
	mu      sync.Mutex
	free    int                      // places not held
	perConn int                      // most places one connection holds
	waiting map[*connBodies]struct{} // connections with requests waiting
}

func newBodyGate(places, perConn int) *bodyGate {
	return &bodyGate{free: places, perConn: max(perConn, 1), waiting: make(map[*connBodies]struct{})}
}

// connBodies is one connection's share of a bodyGate.
type connBodies struct {
	held    int           // places held
	waiters []*bodyWaiter // in order of arrival
}

// bodyWaiter is a request waiting for a place.
type bodyWaiter struct {
	caller  *caller
	ready   chan struct{} // closed when the place is given
	granted bool
}

// acquire takes a place for a request of who on the connection c,
// waiting up to wait or until ctx is done. It reports whether it got one;
// when it did, release must give it back.
func (g *bodyGate) acquire(ctx context.Context, c *connBodies, who *caller, wait time.Duration) bool {
	g.mu.Lock()
	if g.free > 0 && c.held < g.perConn && len(c.waiters) == 0 {
		g.free--
		c.held++
		who.held++
		g.mu.Unlock()
		return true
	}
	w := &bodyWaiter{caller: who, ready: make(chan struct{})}
	c.waiters = append(c.waiters, w)
	g.waiting[c] = struct{}{}
	g.mu.Unlock()

	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-w.ready:
		return true
	case <-ctx.Done():
	case <-timer.C:
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if w.granted { // given just as the wait ended
		return true
	}
	for i, other := range c.waiters {
		if other == w {
			c.waiters = append(c.waiters[:i], c.waiters[i+1:]...)
			break
		}
	}
	if len(c.waiters) == 0 {
		delete(g.waiting, c)
	}
	return false
}

// release gives back a place that who took on c.
func (g *bodyGate) release(c *connBodies, who *caller) {
	g.mu.Lock()
	defer g.mu.Unlock()
	c.held--
	who.held--
	g.free++
	for g.free > 0 {
		var next *connBodies
		for w := range g.waiting {
			if w.held >= g.perConn {
				continue
			}
			if next == nil {
				next = w
				continue
			}
			held, nextHeld := w.waiters[0].caller.held, next.waiters[0].caller.held
			if held < nextHeld || held == nextHeld && w.held < next.held {
				next = w
			}
		}
		if next == nil {
			return
		}
		w := next.waiters[0]
		next.waiters = next.waiters[1:]
		if len(next.waiters) == 0 {
			delete(g.waiting, next)
		}
		w.granted = true
		close(w.ready)
		g.free--
		next.held++
		w.caller.held++
	}
}

// connBodiesKey is the context key of a connection's *connBodies.
type connBodiesKey struct{}

// withConnBodies is the http.Server's ConnContext: each connection gets its
// share of the bodyGate.
func withConnBodies(ctx context.Context, _ net.Conn) context.Context {
	return context.WithValue(ctx, connBodiesKey{}, &connBodies{})
}

// minBodyRate is the least rate, in bytes a second, at which a request
// body must arrive once it has a place: a body that sends less in any
// second is cut off, answered 400 invalid_body ("the body did not arrive in
// time") and its connection closed. A body of the API is at most 64 KiB,
// so one that keeps to the floor takes at most a minute (and -body-timeout
// bounds it anyway); one that drips holds its place for a second.
const minBodyRate = 1024

// errNoPlace is what reading a body gives when no place in the bodyGate
// came free in time.
var errNoPlace = fmt.Errorf("the server is reading as many request bodies as it may: %w", petstore.ErrUnavailable)

// gatedBody is a request body that takes a place in its bodyGate on its
// first read, and then must arrive within its timeout, and at minBodyRate
// on average after its first second: each byte read buys the rest of the
// body 1/minBodyRate of a second. It keeps a read deadline at the time its
// bytes have bought, which it lifts once the body has been read to its
// end: the deadline bounds sending the body, not the handler's work after
// it. (Over HTTP/1.1 the deadline is the connection's, and one that passed
// while the handler works would cancel the request.) A read that the
// deadline cuts off fails with os.ErrDeadlineExceeded, which the API
// handler answers 400 invalid_body; net/http then closes the connection,
// since the rest of the body cannot be read.
//
// A read that finds no place in time fails with errNoPlace, which wraps
// petstore.ErrUnavailable: the API handler answers it 503 with
// Retry-After. The API handler reads a body only once it has authenticated
// the caller, so a request without a valid key never takes a place.
type gatedBody struct {
	io.ReadCloser
	gate    *bodyGate
	conn    *connBodies
	caller  *caller
	ctx     context.Context
	w       http.ResponseWriter // for its connection's read deadline
	timeout time.Duration
	now     func() time.Time

	held     bool // a place is held
	refused  bool // no place came free in time
	ended    bool // read to its end
	deadline bool // a read deadline is set
	start    time.Time
	got      int // bytes read
}

func (b *gatedBody) Read(p []byte) (int, error) {
	if !b.held {
		if b.refused || !b.gate.acquire(b.ctx, b.conn, b.caller, b.timeout) {
			b.refused = true
			return 0, errNoPlace
		}
		b.held = true
		b.start = b.now()
	}
	bought := b.start.Add(time.Second + time.Duration(b.got)*time.Second/minBodyRate)
	b.deadline = http.NewResponseController(b.w).SetReadDeadline(minTime(bought, b.start.Add(b.timeout))) == nil
	n, err := b.ReadCloser.Read(p)
	b.got += n
	b.ended = b.ended || errors.Is(err, io.EOF)
	if errors.Is(err, io.EOF) && b.deadline {
		b.deadline = false
		_ = http.NewResponseController(b.w).SetReadDeadline(time.Time{}) // the connection is gone if this fails
	}
	return n, err
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// unreadGrace is how long the rest of a body that the API left unread may
// take to arrive once the API has answered.
const unreadGrace = 100 * time.Millisecond

// finish ends the body's request once the API has answered: it gives the
// place back, if the body took one, and gives what is left of a body the
// API left unread (a 401 or a 429, say) unreadGrace to come. net/http reads
// that rest before it sends the answer or reuses the connection: a body
// sent at once is read at once, and the connection kept; one that does not
// come in time closes the connection, rather than hold it up to
// -read-timeout.
func (b *gatedBody) finish() {
	if b.held {
		b.held = false
		b.gate.release(b.conn, b.caller)
	}
	if !b.ended {
		_ = http.NewResponseController(b.w).SetReadDeadline(time.Now().Add(unreadGrace))
	}
}
