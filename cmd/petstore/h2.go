//lint:file-ignore SA1019 net/http has no way to serve HTTP/2 on a connection it did not accept, which counting frames needs: golang.org/x/net/http2's ServeConn does.

package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"golang.org/x/net/http2"
)

// The HTTP/2 settings of the server. With the body places of -max-bodies
// they bound what one connection can make the server hold, whatever it
// sends; the README's limits section adds them up.
const (
	// h2MaxStreams is the streams one connection may have open at once.
	h2MaxStreams = 100
	// h2StreamWindow is the request body one stream may send before its
	// handler reads it: the API's largest body, 64 KiB.
	h2StreamWindow = 64 << 10
	// h2ConnWindow is the request body that all of one connection's streams
	// together may send before their handlers read it.
	h2ConnWindow = 256 << 10
	// h2FrameSize is the largest frame the server reads, HTTP/2's least:
	// the read buffer of a connection stays at 16 KiB.
	h2FrameSize = 16 << 10
	// h2HeaderTable is the HPACK table of header fields the server keeps
	// for each connection: HTTP/2's default, 4 KiB.
	h2HeaderTable = 4 << 10
	// h2HeaderList is the largest header list (HTTP/2 counts each field's
	// name and value and 32 bytes) that reaches the handler. The limit the
	// README states, 16 KiB counted as HTTP/1.1 counts it, is checked there
	// (see limitHead); this one is wide enough that a head under 16 KiB
	// with up to about 1,700 fields fits, so that a head over 16 KiB and
	// under 64 KiB is answered 431 on its own stream. Past it the stream
	// still gets 431 when its fields fit one frame; a single field longer
	// than it, or more frames of fields after it, closes the connection, as
	// HTTP/2's header compression gives no way to skip them.
	h2HeaderList = 64 << 10
)

// maxHead is the limit on a request's head that the README states: the
// request line and the header fields, with their line ends and the blank
// line, as HTTP/1.1 sends them.
const maxHead = 16 << 10

// The control frame budget of an HTTP/2 connection: a token bucket of
// floodBurst frames, refilled at floodRate frames a second. A connection
// that sends control frames (SETTINGS, PING, WINDOW_UPDATE, PRIORITY,
// RST_STREAM, or empty DATA frames that do not end their stream) faster is
// closed. Go's HTTP/2 server closes a connection only when the answers it
// owes (to PING, say) pile up unread; a SETTINGS flood owes none, and a
// client can send millions a second, each costing the server work.
const (
	floodBurst = 1000
	floodRate  = 500
)

// serveHTTP2 configures srv to serve HTTP/2 over TLS with the settings
// above, counting each connection's control frames. base supplies what the
// HTTP/2 server reads from an http.Server: timeouts, the error log and the
// ConnState hook; its MaxHeaderBytes is set for h2HeaderList.
func serveHTTP2(srv, base *http.Server, logger *slog.Logger) error {
	base.HTTP2 = &http.HTTP2Config{
		MaxConcurrentStreams:          h2MaxStreams,
		MaxDecoderHeaderTableSize:     h2HeaderTable,
		MaxEncoderHeaderTableSize:     h2HeaderTable,
		MaxReadFrameSize:              h2FrameSize,
		MaxReceiveBufferPerConnection: h2ConnWindow,
		MaxReceiveBufferPerStream:     h2StreamWindow,
	}
	h2 := &http2.Server{}
	if err := http2.ConfigureServer(srv, h2); err != nil {
		return err
	}
	// The HTTP/2 server adds 320 bytes to MaxHeaderBytes for its limit on
	// the header list.
	base.MaxHeaderBytes = h2HeaderList - 320
	srv.TLSNextProto[http2.NextProtoTLS] = func(_ *http.Server, c *tls.Conn, h http.Handler) {
		// net/http passes the connection's context by a method of h.
		var ctx context.Context
		if bc, ok := h.(interface{ BaseContext() context.Context }); ok {
			ctx = bc.BaseContext()
		}
		m := &frameMeter{Conn: c, tls: c, preface: len(http2.ClientPreface), tokens: floodBurst, last: time.Now(), logger: logger}
		h2.ServeConn(m, &http2.ServeConnOpts{Context: ctx, Handler: h, BaseConfig: base})
	}
	return nil
}

// frameMeter is an HTTP/2 connection that reads the headers of the frames
// the client sends and closes the connection when control frames exceed
// their budget.
type frameMeter struct {
	net.Conn
	tls    *tls.Conn
	logger *slog.Logger

	// Read is called by the HTTP/2 server's one reading goroutine.
	preface int     // bytes of the client preface still to come
	head    [9]byte // the frame header being read
	headN   int
	skip    uint32 // payload bytes of the current frame still to come
	tokens  float64
	last    time.Time
	frames  int // control frames so far
	flooded bool
}

// errFlood is what a flooding connection's Read returns: a closed
// connection, which the HTTP/2 server does not log again.
var errFlood = fmt.Errorf("petstore: HTTP/2 control frame flood: %w", net.ErrClosed)

func (m *frameMeter) Read(p []byte) (int, error) {
	if m.flooded {
		return 0, errFlood
	}
	n, err := m.Conn.Read(p)
	if m.flooded {
		return 0, errFlood
	}
	if n > 0 && m.count(p[:n], time.Now()) {
		m.flooded = true
		m.Conn.Close()
		m.logger.Warn("petstore: closed an HTTP/2 connection that flooded control frames",
			"remote", m.RemoteAddr().String(), "control_frames", m.frames, "burst", floodBurst, "per_second", floodRate)
		return 0, errFlood
	}
	return n, err
}

// count reads the frame headers in b and reports whether the control
// frames among them exceed the budget.
func (m *frameMeter) count(b []byte, now time.Time) bool {
	control := 0
	for len(b) > 0 {
		switch {
		case m.preface > 0:
			k := min(m.preface, len(b))
			m.preface -= k
			b = b[k:]
		case m.skip > 0:
			k := int(min(m.skip, uint32(len(b))))
			m.skip -= uint32(k)
			b = b[k:]
		default:
			k := copy(m.head[m.headN:], b)
			m.headN += k
			b = b[k:]
			if m.headN < len(m.head) {
				break
			}
			m.headN = 0
			length := uint32(m.head[0])<<16 | uint32(m.head[1])<<8 | uint32(m.head[2])
			m.skip = length
			if isControlFrame(http2.FrameType(m.head[3]), http2.Flags(m.head[4]), length) {
				control++
			}
		}
	}
	if control == 0 {
		return false
	}
	m.frames += control
	m.tokens = min(floodBurst, m.tokens+now.Sub(m.last).Seconds()*floodRate)
	m.last = now
	m.tokens -= float64(control)
	return m.tokens < 0
}

// isControlFrame reports whether a frame counts against the control frame
// budget.
func isControlFrame(t http2.FrameType, flags http2.Flags, length uint32) bool {
	switch t {
	case http2.FrameSettings, http2.FramePing, http2.FrameWindowUpdate, http2.FramePriority, http2.FrameRSTStream:
		return true
	case http2.FrameData:
		return length == 0 && !flags.Has(http2.FlagDataEndStream)
	}
	return false
}

// ConnectionState returns the TLS state of the connection, for the HTTP/2
// server to check and to give requests.
func (m *frameMeter) ConnectionState() tls.ConnectionState { return m.tls.ConnectionState() }

// NetConn returns the TLS connection underneath.
func (m *frameMeter) NetConn() net.Conn { return m.tls }

// headSize returns the size of r's head as HTTP/1.1 would send it: the
// request line, the Host field and the other fields, each on a line of its
// own, and the blank line.
func headSize(r *http.Request) int {
	n := len(r.Method) + 1 + len(r.RequestURI) + len(" HTTP/1.1\r\n") + len("Host: \r\n") + len(r.Host) + len("\r\n")
	for name, values := range r.Header {
		for _, v := range values {
			n += len(name) + len(": \r\n") + len(v)
		}
	}
	return n
}
