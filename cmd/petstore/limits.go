package main

import (
	"fmt"
	"net/http"
	"strings"
	"time"
)

// limitFlags holds the flags that bound what a client can hold.
type limitFlags struct {
	readHeaderTimeout time.Duration
	readTimeout       time.Duration
	writeTimeout      time.Duration
	idleTimeout       time.Duration
	storeTimeout      time.Duration
	maxInFlight       int
}

// removedFlags are the flags of earlier versions, with what does their job.
var removedFlags = map[string]string{
	"max-conns":    "the open-file limit (ulimit -n) bounds the connections, and a proxy in front bounds them per client address (docs/operating.md)",
	"max-bodies":   "-read-timeout bounds how long a body may take, and a proxy in front buffers bodies (docs/operating.md)",
	"max-share":    "-max-in-flight caps one caller's requests in flight",
	"body-timeout": "-read-timeout bounds how long a request's head and body may take",
}

// removedFlag returns flag's error err, saying what replaced a removed flag.
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

// newServer returns the http.Server of api with the limits of l.
func (l *limitFlags) newServer(api http.Handler) *http.Server {
	return &http.Server{
		Handler:           api, // answers a 401 with Connection: close
		ReadHeaderTimeout: l.readHeaderTimeout,
		ReadTimeout:       l.readTimeout,
		WriteTimeout:      l.writeTimeout,
		IdleTimeout:       l.idleTimeout,
		// net/http allows 4096 bytes more: a head of 16 KiB is served, one
		// byte more refused.
		MaxHeaderBytes: 16<<10 - 4096,
		// What one HTTP/2 connection may make the server hold; a stream's
		// buffer holds the API's largest body.
		HTTP2: &http.HTTP2Config{
			MaxConcurrentStreams:          100,
			MaxReceiveBufferPerStream:     64 << 10,
			MaxReceiveBufferPerConnection: 256 << 10,
			MaxReadFrameSize:              16 << 10,
			MaxDecoderHeaderTableSize:     4 << 10,
			MaxEncoderHeaderTableSize:     4 << 10,
		},
		// OPTIONS * goes to the handler, which asks for a key.
		DisableGeneralOptionsHandler: true,
	}
}
