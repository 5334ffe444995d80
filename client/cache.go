package client

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
)

// DefaultETagCacheBytes is how many bytes of answers a Client keeps for
// conditional requests unless WithETagCache sets another: 1 MiB.
const DefaultETagCacheBytes = 1 << 20

// WithETagCache sets how many bytes of answer bodies the Client keeps to
// send If-None-Match with. The server gives a pet, and a full page of a
// list, a strong ETag, since neither ever changes. The Client keeps such an
// answer, by API key and URL, and asks for it again with If-None-Match: a
// 304 Not Modified then costs the server no encoding and the network no
// body, and the Client reads the answer it kept. Get of a pet read before
// and List or All over pages read before benefit; the last page of a list,
// which can still grow, has no ETag and is always read in full.
//
// When the bodies kept pass the bound, the oldest are forgotten; an answer
// larger than a quarter of it is not kept. The default is
// DefaultETagCacheBytes, 1 MiB; 0 keeps nothing and sends no If-None-Match.
func WithETagCache(bytes int) Option {
	return optionFunc(func(c *Client) error {
		if bytes < 0 {
			return fmt.Errorf("WithETagCache: %d is negative; give a bound in bytes, or 0 to keep nothing", bytes)
		}
		c.etags = newETagCache(bytes)
		return nil
	})
}

// An etagCache keeps answers with an ETag, so that a request for them again
// can carry If-None-Match and take a 304 as the same answer. It holds at
// most max bytes of bodies and forgets the oldest first. Its methods are
// safe for concurrent use; a nil *etagCache keeps nothing.
type etagCache struct {
	mu    sync.Mutex
	max   int
	size  int
	items map[cacheKey]cached
	order []cacheKey // the keys of items, oldest first
}

// A cacheKey names an answer: the API key it was read with, since answers
// are the caller's, and its URL.
type cacheKey struct{ apiKey, url string }

// A cached answer. Its header and body are never modified.
type cached struct {
	etag   string
	header http.Header
	body   []byte
}

// newETagCache returns a cache of at most max bytes, or nil for 0.
func newETagCache(max int) *etagCache {
	if max == 0 {
		return nil
	}
	return &etagCache{max: max, items: map[cacheKey]cached{}}
}

// get returns the answer kept for k.
func (e *etagCache) get(k cacheKey) (cached, bool) {
	if e == nil {
		return cached{}, false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	v, ok := e.items[k]
	return v, ok
}

// keep keeps ans for k when it has an ETag and its Cache-Control allows a
// cache to store it, and is small enough.
func (e *etagCache) keep(k cacheKey, ans answer) {
	etag := ans.header.Get("ETag")
	if e == nil || etag == "" || len(ans.body) > e.max/4 || noStore(ans.header) {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if old, ok := e.items[k]; ok {
		e.size -= len(old.body) // keeps its place in the order
	} else {
		e.order = append(e.order, k)
	}
	e.items[k] = cached{etag: etag, header: ans.header, body: ans.body}
	e.size += len(ans.body)
	for e.size > e.max {
		oldest := e.order[0]
		e.order = e.order[1:]
		e.size -= len(e.items[oldest].body)
		delete(e.items, oldest)
	}
}

// noStore reports whether Cache-Control forbids keeping the answer.
func noStore(h http.Header) bool {
	for _, v := range h.Values("Cache-Control") {
		for d := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(d), "no-store") {
				return true
			}
		}
	}
	return false
}
