package main

import (
	"container/list"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// maxHeaderBytes is the http.Server's MaxHeaderBytes. net/http lets a
// request's head (its request line and headers) run 4096 bytes past
// MaxHeaderBytes before it answers 431, so the field is set that much below
// the 16 KiB that the README states: a head of 16,384 bytes is served, one
// byte more is refused.
const maxHeaderBytes = 16<<10 - 4096

// fileHeadroom is how many of the process's file descriptors the default
// of -max-conns leaves for everything that is not a client connection: the
// listener, standard streams, the PostgreSQL pool, the TLS files as they
// are read again, and the runtime's own.
const fileHeadroom = 64

// defaultMaxConns is the default of -max-conns for a process that may hold
// openFiles file descriptors (RLIMIT_NOFILE): all of them but fileHeadroom,
// and at least half of them when the limit is too low for that headroom.
func defaultMaxConns(openFiles uint64) int {
	n := max(openFiles-min(openFiles, fileHeadroom), openFiles/2)
	const most = 1 << 20 // far beyond what a process serves at once
	return int(max(min(n, most), 1))
}

// openFileLimit returns the process's limit on open files (the soft limit,
// which the Go runtime raises to the hard limit on start), or 0 when it
// cannot be read.
func openFileLimit() uint64 {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return 0
	}
	return l.Cur
}

// limitFlags holds the flags that bound what a client can hold: store
// calls, write time and connections.
type limitFlags struct {
	storeTimeout time.Duration
	writeTimeout time.Duration
	maxConns     int
	openFiles    uint64        // the limit the default of maxConns was derived from; 0 when unknown
	maxBodies    int           // requests with a body served at once
	share        float64       // the most of maxBodies and maxConns that one caller holds
	bodyTimeout  time.Duration // how long such a request may wait for a place, and then take to send its body
}

// register adds the flags to fs, with defaults derived from openFiles.
func (l *limitFlags) register(fs *flag.FlagSet, openFiles uint64) {
	l.openFiles = openFiles
	defaultConns := 1024
	if openFiles > 0 {
		defaultConns = defaultMaxConns(openFiles)
	}
	fs.DurationVar(&l.storeTimeout, "store-timeout", 5*time.Second,
		"how long a request's call to the store may take before it is answered 503; must be below -write-timeout")
	fs.DurationVar(&l.writeTimeout, "write-timeout", 30*time.Second,
		"how long the server may take to read a request's body and write its response")
	fs.IntVar(&l.maxConns, "max-conns", defaultConns,
		"most client `connections` served at once, more waiting to be accepted; the default is the open-file limit less 64")
	fs.IntVar(&l.maxBodies, "max-bodies", 256,
		"most `requests` with a body served at once, over all connections; more wait for a place up to -body-timeout, then are answered 503")
	fs.Float64Var(&l.share, "max-share", 0.25,
		"most `fraction` of -max-bodies and of -max-conns that one caller (API key's name) may hold with requests in flight; more are answered 429")
	fs.DurationVar(&l.bodyTimeout, "body-timeout", 10*time.Second,
		"how long a request with a body may wait for a place among -max-bodies, and then how long it may take to send its body")
}

// check reports a combination of the flags that cannot work.
func (l *limitFlags) check() error {
	switch {
	case l.storeTimeout <= 0:
		return fmt.Errorf("-store-timeout %v: want more than 0", l.storeTimeout)
	case l.writeTimeout <= 0:
		return fmt.Errorf("-write-timeout %v: want more than 0", l.writeTimeout)
	case l.storeTimeout >= l.writeTimeout:
		return fmt.Errorf("-store-timeout %v is not below -write-timeout %v: a client would be cut off before it hears "+
			"that the store timed out; lower -store-timeout or raise -write-timeout", l.storeTimeout, l.writeTimeout)
	case l.maxConns < 1:
		return fmt.Errorf("-max-conns %d: want 1 or more", l.maxConns)
	case l.maxBodies < 1:
		return fmt.Errorf("-max-bodies %d: want 1 or more", l.maxBodies)
	case !(l.share > 0 && l.share <= 1):
		return fmt.Errorf("-max-share %v: want a fraction above 0 and at most 1", l.share)
	case l.bodyTimeout <= 0:
		return fmt.Errorf("-body-timeout %v: want more than 0", l.bodyTimeout)
	}
	return nil
}

// perCaller returns the requests that one caller may have in flight at
// once: its share of the body places and of the connections.
func (l *limitFlags) perCaller() int {
	return max(int(l.share*float64(min(l.maxBodies, l.maxConns))), 1)
}

// sockBuffer is the size asked of the kernel for the send and the receive
// buffer of each accepted connection; Linux reserves twice as much, for
// its bookkeeping, so a connection pins at most 256 KiB of kernel memory
// however little its client reads.
const sockBuffer = 64 << 10

// newConnGrace is how long a new connection may go without a complete
// request (for TLS, its handshake and then its request) before a full
// server may close it for a connection waiting to be accepted; idleGrace
// is how long a connection must have been idle. (An HTTP/2 connection is
// idle from its preface to its first request, and an HTTP/1.1 one from the
// end of an answer to the next request's head.)
const (
	newConnGrace = time.Second
	idleGrace    = 250 * time.Millisecond
)

// connLimiter is a listener that serves at most max connections at once.
// When it is full and a connection waits to be accepted, it closes one that
// serves nobody to make room: first the connection idle the longest (kept
// alive between requests, or an HTTP/2 connection with no stream open), then
// the oldest that has not completed a request (a TLS handshake or a request
// head still under way, or nothing sent) once it is newConnGrace old. With
// neither, the new connection waits, holding its file descriptor, and those
// after it wait in the kernel's accept queue, costing none, until a
// connection closes or becomes one of those.
//
// It learns each connection's state from the http.Server's ConnState,
// which must call track.
type connLimiter struct {
	net.Listener
	max       int
	grace     time.Duration // newConnGrace
	idleGrace time.Duration

	mu      sync.Mutex
	open    int
	idle    list.List     // of the *limitedConn that became idle, longest idle first
	fresh   list.List     // of the *limitedConn in StateNew, oldest first
	changed chan struct{} // holds a signal when a place may have come free
	done    chan struct{} // closed by Close
	once    sync.Once
	evicted atomic.Int64 // connections closed to make room
}

// limitListener returns ln serving at most n connections at once.
func limitListener(ln net.Listener, n int) *connLimiter {
	return &connLimiter{Listener: ln, max: n, grace: newConnGrace, idleGrace: idleGrace,
		changed: make(chan struct{}, 1), done: make(chan struct{})}
}

// Accept accepts a connection, closing an idle or stalled one if the
// listener is full, or waiting for a place.
func (l *connLimiter) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	if tc, ok := c.(*net.TCPConn); ok {
		// Bound the kernel's buffers, which it would otherwise grow to
		// megabytes for a client that does not read (see docs/limits.md).
		_ = tc.SetWriteBuffer(sockBuffer)
		_ = tc.SetReadBuffer(sockBuffer)
	}
	lc := &limitedConn{Conn: c, l: l}
	for {
		l.mu.Lock()
		now := time.Now()
		if l.open < l.max {
			l.open++
			lc.since = now
			lc.listLocked(&l.fresh)
			l.mu.Unlock()
			return lc, nil
		}
		victim, wait := l.victimLocked(now)
		if victim != nil {
			l.dropLocked(victim)
			l.mu.Unlock()
			l.evicted.Add(1)
			victim.Conn.Close()
			continue
		}
		l.mu.Unlock()
		timer := time.NewTimer(wait)
		select {
		case <-l.changed:
		case <-timer.C:
		case <-l.done:
			timer.Stop()
			c.Close()
			return nil, net.ErrClosed
		}
		timer.Stop()
	}
}

// victimLocked returns the connection to close for a new one, or how long
// to wait before one of the new connections has had its grace.
func (l *connLimiter) victimLocked(now time.Time) (*limitedConn, time.Duration) {
	wait := time.Hour // until a connection closes
	for _, q := range []struct {
		list  *list.List
		state http.ConnState
		grace time.Duration
	}{{&l.idle, http.StateIdle, l.idleGrace}, {&l.fresh, http.StateNew, l.grace}} {
		for e := q.list.Front(); e != nil; e = q.list.Front() {
			lc := e.Value.(*limitedConn)
			if lc.state != q.state { // active since it was listed
				lc.unlistLocked()
				continue
			}
			age := now.Sub(lc.since)
			if age >= q.grace {
				return lc, 0
			}
			wait = min(wait, q.grace-age)
			break
		}
	}
	return nil, wait
}

// dropLocked gives up lc's place.
func (l *connLimiter) dropLocked(lc *limitedConn) {
	if lc.dropped {
		return
	}
	lc.dropped = true
	lc.unlistLocked()
	l.open--
	l.signal()
}

func (l *connLimiter) signal() {
	select {
	case l.changed <- struct{}{}:
	default:
	}
}

// Close closes the listener; an Accept waiting for a place returns.
func (l *connLimiter) Close() error {
	l.once.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// track is the http.Server's ConnState: it follows the state of the
// listener's connections, under any wrapping that has a NetConn method (as
// *tls.Conn does).
func (l *connLimiter) track(c net.Conn, state http.ConnState) {
	for {
		switch v := c.(type) {
		case *limitedConn:
			l.setState(v, state)
			return
		case interface{ NetConn() net.Conn }:
			c = v.NetConn()
		default:
			return
		}
	}
}

func (l *connLimiter) setState(lc *limitedConn, state http.ConnState) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if lc.dropped || lc.l != l {
		return
	}
	lc.state = state
	switch state {
	case http.StateNew:
		lc.since = time.Now()
		lc.listLocked(&l.fresh)
		l.signal()
	case http.StateIdle:
		lc.since = time.Now()
		lc.listLocked(&l.idle)
		l.signal()
	case http.StateActive: // it stays listed, for victimLocked to pass over: no allocation a request
	default:
		lc.unlistLocked()
	}
}

// writeGrace is how long each write to a connection may take to drain:
// past it the connection is closed and its place freed, whoever it serves,
// so that a client that stops reading cannot hold it until the whole
// answer's deadline.
const writeGrace = 5 * time.Second

// limitedConn is a connection of a connLimiter. Its writes keep a pace:
// each must drain within writeGrace (see pace), within the deadline of the
// answer as a whole that net/http (-write-timeout), front (a public
// answer's) or a watch stream sets with SetWriteDeadline.
type limitedConn struct {
	net.Conn
	l       *connLimiter
	state   http.ConnState // its last state; guarded by l.mu
	since   time.Time      // when it was accepted, or became idle
	dropped bool           // its place is given up

	wmu   sync.Mutex
	end   time.Time // the deadline set with SetWriteDeadline, or zero for none
	armed time.Time // the write deadline set on Conn, or zero for none

	// Guarded by l.mu: the list it is in (l.idle or l.fresh) and its
	// element there, or nil.
	list *list.List
	elem *list.Element
}

// listLocked puts c at the back of q, taking it out of the list it is in.
func (c *limitedConn) listLocked(q *list.List) {
	if c.list == q {
		q.MoveToBack(c.elem)
		return
	}
	c.unlistLocked()
	c.list, c.elem = q, q.PushBack(c)
}

// unlistLocked takes c out of its list, if it is in one.
func (c *limitedConn) unlistLocked() {
	if c.list != nil {
		c.list.Remove(c.elem)
		c.list, c.elem = nil, nil
	}
}

// Write writes p within the pace of the connection's writes.
func (c *limitedConn) Write(p []byte) (int, error) {
	c.pace(time.Now())
	return c.Conn.Write(p)
}

// pace makes sure that the write deadline in force gives a write starting
// at now between writeGrace and one and a half times that to drain, never
// past end. Each write then has at least writeGrace, and a connection that
// writes often moves its deadline once in writeGrace/2, not at every write.
func (c *limitedConn) pace(now time.Time) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	lo, hi := now.Add(writeGrace), now.Add(writeGrace+writeGrace/2)
	if !c.end.IsZero() && c.end.Before(hi) {
		hi = c.end
		lo = minTime(lo, hi)
	}
	if c.armed.IsZero() || c.armed.Before(lo) || c.armed.After(hi) {
		c.armed = hi
		_ = c.Conn.SetWriteDeadline(hi) // fails only on a closed connection, whose write fails too
	}
}

// SetWriteDeadline sets the deadline of the writes to come as a whole; each
// must also drain within writeGrace. A deadline earlier than the one in
// force applies at once, to a write under way too.
func (c *limitedConn) SetWriteDeadline(t time.Time) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.end = t
	if !t.IsZero() && (c.armed.IsZero() || t.Before(c.armed)) {
		c.armed = t
		return c.Conn.SetWriteDeadline(t)
	}
	return nil
}

// SetDeadline sets the read deadline, and the write deadline as
// SetWriteDeadline does.
func (c *limitedConn) SetDeadline(t time.Time) error {
	if err := c.Conn.SetReadDeadline(t); err != nil {
		return err
	}
	return c.SetWriteDeadline(t)
}

// Close closes the connection and frees its place.
func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.l.mu.Lock()
	c.l.dropLocked(c)
	c.l.mu.Unlock()
	return err
}

// CloseWrite closes the connection for writing, so that the client reads
// what was sent and then the end of the stream: net/http sends its last
// answer on a connection it closes (431, or 413 for a body left unread)
// this way, before the reset that unread input causes.
func (c *limitedConn) CloseWrite() error {
	if hc, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return hc.CloseWrite()
	}
	return errors.ErrUnsupported
}
