package main

import (
	"flag"
	"fmt"
	"net"
	"net/http"
	"sync"
	"syscall"
	"time"

	"golang.org/x/net/netutil"
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
	openFiles    uint64 // the limit the default of maxConns was derived from; 0 when unknown
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
	}
	return nil
}

// limitListener returns ln accepting at most n connections at once: a
// connection beyond them waits in the kernel's accept queue, costing no
// file descriptor of the process, until one of them closes.
//
// netutil.LimitListener hides the connection's CloseWrite, which net/http
// uses to send its last answer on a connection it closes (431, or 413 for a
// body left unread) before the reset that unread input causes; without it
// the client may see the reset and lose the answer. The connections that
// limitListener returns have CloseWrite again, when the connection from ln
// has it.
func limitListener(ln net.Listener, n int) net.Listener {
	inner := &lastAccepted{Listener: ln}
	return &cappedListener{Listener: netutil.LimitListener(inner, n), inner: inner}
}

// cappedListener is netutil.LimitListener on inner, giving back the
// CloseWrite of the connections that inner accepts.
type cappedListener struct {
	net.Listener
	inner *lastAccepted
	mu    sync.Mutex // held through Accept, so that inner.last is this Accept's
}

func (l *cappedListener) Accept() (net.Conn, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	if hc, ok := l.inner.last.(halfCloser); ok {
		return &cappedConn{Conn: c, half: hc}, nil
	}
	return c, nil
}

// lastAccepted is a listener that remembers the connection it accepted
// last.
type lastAccepted struct {
	net.Listener
	last net.Conn
}

func (l *lastAccepted) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	l.last = c
	return c, err
}

// halfCloser is a connection that can be closed for writing alone, as a
// *net.TCPConn can.
type halfCloser interface {
	CloseWrite() error
}

// cappedConn is a connection of netutil.LimitListener, whose Close frees its
// place, with the CloseWrite of the connection underneath.
type cappedConn struct {
	net.Conn
	half halfCloser
}

// CloseWrite closes the connection for writing: the client reads what was
// sent and then the end of the stream.
func (c *cappedConn) CloseWrite() error { return c.half.CloseWrite() }

// closeOnUnauthorized wraps h so that every 401 answer closes its
// connection (with Connection: close on HTTP/1.1, with GOAWAY on HTTP/2):
// a client without a valid key cannot keep a connection, and the file
// descriptor it holds, for the idle timeout.
func closeOnUnauthorized(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(&unauthorizedCloser{ResponseWriter: w}, r)
	})
}

// unauthorizedCloser is the ResponseWriter of closeOnUnauthorized. Unwrap
// keeps http.ResponseController working through it.
type unauthorizedCloser struct {
	http.ResponseWriter
	wroteHeader bool
}

func (w *unauthorizedCloser) WriteHeader(code int) {
	if !w.wroteHeader && code == http.StatusUnauthorized {
		w.Header().Set("Connection", "close")
	}
	if code >= 200 {
		w.wroteHeader = true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *unauthorizedCloser) Write(b []byte) (int, error) {
	w.wroteHeader = true
	return w.ResponseWriter.Write(b)
}

// Unwrap returns the ResponseWriter underneath, for http.ResponseController.
func (w *unauthorizedCloser) Unwrap() http.ResponseWriter { return w.ResponseWriter }
