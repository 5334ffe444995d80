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
// the connection that holds the fewest places, so that a connection that
// holds many cannot keep the others waiting.
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
	ready   chan struct{} // closed when the place is given
	granted bool
}

// acquire takes a place for a request of the connection c, waiting up to
// wait or until ctx is done. It reports whether it got one; when it did,
// release must give it back.
func (g *bodyGate) acquire(ctx context.Context, c *connBodies, wait time.Duration) bool {
	g.mu.Lock()
	if g.free > 0 && c.held < g.perConn && len(c.waiters) == 0 {
		g.free--
		c.held++
		g.mu.Unlock()
		return true
	}
	w := &bodyWaiter{ready: make(chan struct{})}
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

// release gives back a place that c took.
func (g *bodyGate) release(c *connBodies) {
	g.mu.Lock()
	defer g.mu.Unlock()
	c.held--
	g.free++
	for g.free > 0 {
		var next *connBodies
		for w := range g.waiting {
			if w.held < g.perConn && (next == nil || w.held < next.held) {
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
	}
}

// connBodiesKey is the context key of a connection's *connBodies.
type connBodiesKey struct{}

// withConnBodies is the http.Server's ConnContext: each connection gets its
// share of the bodyGate.
func withConnBodies(ctx context.Context, _ net.Conn) context.Context {
	return context.WithValue(ctx, connBodiesKey{}, &connBodies{})
}

// limitBodies wraps h so that a request body takes a place in g when h
// first reads it, waiting for a place for at most timeout, and then has
// timeout to arrive; the place is held until h returns. The handler reads a
// body only once it has authenticated the caller, so a request without a
// valid key never takes a place and the key is checked once. A read that
// finds no place in time fails with errNoPlace, which wraps
// petstore.ErrUnavailable: the handler answers it 503 with Retry-After.
func limitBodies(h http.Handler, g *bodyGate, timeout time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength == 0 {
			h.ServeHTTP(w, r)
			return
		}
		c, _ := r.Context().Value(connBodiesKey{}).(*connBodies)
		if c == nil { // a connection that ConnContext did not see
			c = &connBodies{}
		}
		b := &gatedBody{ReadCloser: r.Body, gate: g, conn: c, ctx: r.Context(), w: w, timeout: timeout}
		r.Body = b
		defer b.release()
		h.ServeHTTP(w, r)
	})
}

// errNoPlace is what reading a body gives when no place in the bodyGate
// came free in time.
var errNoPlace = fmt.Errorf("the server is reading as many request bodies as it may: %w", petstore.ErrUnavailable)

// gatedBody is a request body that takes a place in its bodyGate on its
// first read, and then has a read deadline, which it lifts once the body has
// been read to its end: the deadline bounds sending the body, not the
// handler's work after it. (Over HTTP/1.1 the deadline is the connection's,
// and one that passed while the handler works would cancel the request.)
type gatedBody struct {
	io.ReadCloser
	gate    *bodyGate
	conn    *connBodies
	ctx     context.Context
	w       http.ResponseWriter
	timeout time.Duration

	held     bool // a place is held
	refused  bool // no place came free in time
	deadline bool // a read deadline is set
}

func (b *gatedBody) Read(p []byte) (int, error) {
	if !b.held {
		if b.refused || !b.gate.acquire(b.ctx, b.conn, b.timeout) {
			b.refused = true
			return 0, errNoPlace
		}
		b.held = true
		b.deadline = http.NewResponseController(b.w).SetReadDeadline(time.Now().Add(b.timeout)) == nil
	}
	n, err := b.ReadCloser.Read(p)
	if errors.Is(err, io.EOF) && b.deadline {
		b.deadline = false
		_ = http.NewResponseController(b.w).SetReadDeadline(time.Time{}) // the connection is gone if this fails
	}
	return n, err
}

// release gives the place back, if the body took one.
func (b *gatedBody) release() {
	if b.held {
		b.held = false
		b.gate.release(b.conn)
	}
}
