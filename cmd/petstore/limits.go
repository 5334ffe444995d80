package main

import (
	"fmt"
	"net/http"
	"strings"
	"time"
)

// maxHeaderBytes is the http.Server's MaxHeaderBytes. net/http lets a
// request's head (its request line and headers) run 4096 bytes past
// MaxHeaderBytes before it answers 431, so the field is set that much below
// 16 KiB: a head of 16,384 bytes is served, one byte more is refused.
const maxHeaderBytes = 16<<10 - 4096

// http2Config is what one HTTP/2 connection may make the server hold: 100
// streams, each with 64 KiB of request body unread (the API's largest
// body), 256 KiB for the connection as a whole, frames of at most 16 KiB
// (HTTP/2's least) and header tables of 4 KiB.
var http2Config = http.HTTP2Config{
	MaxConcurrentStreams:          100,
	MaxReceiveBufferPerStream:     64 << 10,
	MaxReceiveBufferPerConnection: 256 << 10,
	MaxReadFrameSize:              16 << 10,
	MaxDecoderHeaderTableSize:     4 << 10,
	MaxEncoderHeaderTableSize:     4 << 10,
}

// limitFlags holds the flags that bound what a client can hold: the
// server's timeouts, store calls, and one caller's requests in flight.
type limitFlags struct {
	readHeaderTimeout time.Duration
	readTimeout       time.Duration
	writeTimeout      time.Duration
	idleTimeout       time.Duration
	storeTimeout      time.Duration
	maxInFlight       int
}

// removedFlags are the flags of earlier versions that bounded connections
// and bodies in the process, with what does their job now.
var removedFlags = map[string]string{
	"max-conns":    "the open-file limit (ulimit -n) bounds the connections, and a proxy in front bounds them per client address (docs/operating.md)",
	"max-bodies":   "-read-timeout bounds how long a body may take, and a proxy in front buffers bodies (docs/operating.md)",
	"max-share":    "-max-in-flight caps one caller's requests in flight",
	"body-timeout": "-read-timeout bounds how long a request's head and body may take",
}

// removedFlag returns an error that says what replaced a removed flag,
// when err is flag's error for it, and err otherwise.
func removedFlag(err error) error {
	name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: -")
	if instead, removed := removedFlags[name]; ok && removed {
		return fmt.Errorf("-%s is gone: %s", name, instead)
	}
	return fmt.Errorf("%v; see -help", err)
}

// check reports a combination of the flags that cannot work.
func (l *limitFlags) check() error {
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"read-header-timeout", l.readHeaderTimeout}, {"read-timeout", l.readTimeout}, {"write-timeout", l.writeTimeout},
		{"idle-timeout", l.idleTimeout}, {"store-timeout", l.storeTimeout}} {
		if d.v <= 0 {
			return fmt.Errorf("-%s %v: want more than 0", d.name, d.v)
		}
	}
	switch {
	case l.storeTimeout >= l.writeTimeout:
		return fmt.Errorf("-store-timeout %v is not below -write-timeout %v: a client would be cut off before it hears "+
			"that the store timed out; lower -store-timeout or raise -write-timeout", l.storeTimeout, l.writeTimeout)
	case l.maxInFlight < 0:
		return fmt.Errorf("-max-in-flight %d: want 0 or more", l.maxInFlight)
	}
	return nil
}

// newServer returns the http.Server of the API handler api, with the
// limits of l.
func (l *limitFlags) newServer(api http.Handler) *http.Server {
	h2 := http2Config
	return &http.Server{
		Handler:           api, // answers a 401 with Connection: close
		ReadHeaderTimeout: l.readHeaderTimeout,
		ReadTimeout:       l.readTimeout,
		WriteTimeout:      l.writeTimeout,
		IdleTimeout:       l.idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		HTTP2:             &h2,
		// OPTIONS * goes to the handler, which asks for a key like
		// everywhere else, rather than to net/http's answer of 200.
		DisableGeneralOptionsHandler: true,
	}
}
