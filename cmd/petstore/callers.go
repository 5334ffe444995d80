package main

import (
	"context"
	"crypto/sha256"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/petstore-go/petstore/httpapi"
)

// callers names the caller of a request before the API handler has
// authenticated it, as the handler will: by the name of its API key, or
// for a key without one by the key itself (held hashed, and never logged).
// A request without a valid key has no caller.
type callers map[[sha256.Size]byte]string

// newCallers returns the callers of the entries of PETSTORE_API_KEYS.
func newCallers(entries []string) callers {
	c := callers{}
	for _, e := range entries {
		name, key, named := strings.Cut(e, ":")
		if !named {
			name, key = "", e
		}
		sum := sha256.Sum256([]byte(key))
		c[sum] = name
		if name == "" {
			c[sum] = "key:" + string(sum[:8])
		}
	}
	return c
}

// of returns the caller of r, or "" when r carries no valid key.
func (c callers) of(r *http.Request) string {
	token, err := httpapi.BearerToken(r)
	if err != nil {
		return ""
	}
	return c[sha256.Sum256([]byte(token))]
}

// callerShare bounds the requests that one caller has in flight at once,
// over all its connections and streams: each holds a connection (over
// HTTP/1.1), and perhaps a body place, so a caller that holds its share of
// them cannot take the rest from the others, however many connections it
// opens.
type callerShare struct {
	max int

	mu   sync.Mutex
	busy map[string]int // requests in flight by caller; absent when none
}

func newCallerShare(max int) *callerShare {
	return &callerShare{max: max, busy: map[string]int{}}
}

// take counts a request of caller in flight, unless the caller already has
// its share; done must then be called when the request ends.
func (s *callerShare) take(caller string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.busy[caller] >= s.max {
		return false
	}
	s.busy[caller]++
	return true
}

func (s *callerShare) done(caller string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.busy[caller]--; s.busy[caller] <= 0 {
		delete(s.busy, caller)
	}
}

// held returns the requests that caller has in flight.
func (s *callerShare) held(caller string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.busy[caller]
}

// closeNow ends the HTTP/1.1 connection of w once what was written has
// been sent, without waiting, as net/http would, for the rest of a request
// body that may never come: it sends the answer and the end of the stream,
// and closes the connection a moment later, so that the client reads the
// answer before the reset that unread input causes. Over HTTP/2 the
// stream ends as the handler returns, and closeNow does nothing.
func closeNow(w http.ResponseWriter) {
	conn, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	_ = buf.Flush()
	if cw, ok := conn.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
	time.AfterFunc(100*time.Millisecond, func() { conn.Close() })
}

// callerKey is the context key of a request's caller, as limitCallers
// names it.
type callerKey struct{}

// callerOf returns the caller that limitCallers put in ctx, or "".
func callerOf(ctx context.Context) string {
	c, _ := ctx.Value(callerKey{}).(string)
	return c
}

// limitCallers wraps h so that a caller with its share of requests in
// flight is answered 429 rate_limited with Retry-After: 1, and its
// HTTP/1.1 connection closed (over HTTP/2 the stream ends), rather than
// served. A request without a valid key is passed on, to be
// answered 401. The request's caller is put in its context for the body
// gate.
func limitCallers(h http.Handler, who callers, share *callerShare) http.Handler {
	retry := []string{"1"}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		caller := who.of(r)
		if caller == "" {
			h.ServeHTTP(w, r)
			return
		}
		if !share.take(caller) {
			w.Header()["Retry-After"] = retry
			if r.ProtoMajor == 1 {
				// Over HTTP/2 the stream's end frees what it held; a
				// GOAWAY would only make the client pay for a new
				// handshake, and the server too.
				w.Header().Set("Connection", "close")
			}
			httpapi.WriteError(w, r, httpapi.CodeRateLimited, "this API key has "+strconv.Itoa(share.max)+
				" requests in flight, its share of the server; wait for an answer before sending more")
			closeNow(w)
			return
		}
		defer share.done(caller)
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), callerKey{}, caller)))
	})
}
