// Package body reads request bodies: the JSON media type check, a bounded
// read into a reused buffer, and the pool of those buffers.
package body

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
)

// ErrTooLarge is returned by Read for a body over the limit.
var ErrTooLarge = errors.New("request body too large")

// IsJSON reports whether a Content-Type header value names application/json,
// in any case, with or without parameters such as charset.
func IsJSON(contentType string) bool {
	if contentType == "application/json" {
		return true
	}
	mediaType, _, _ := strings.Cut(contentType, ";")
	return strings.EqualFold(strings.TrimSpace(mediaType), "application/json")
}

// Read reads r's body into buf, growing it as needed, and returns it. It
// returns ErrTooLarge, without reading further, as soon as the body is longer
// than limit bytes.
func Read(r *http.Request, limit int64, buf []byte) ([]byte, error) {
	if r.ContentLength > limit {
		return buf[:0], ErrTooLarge
	}
	if r.Body == nil || r.Body == http.NoBody {
		return buf[:0], nil
	}
	buf = buf[:0]
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		room := cap(buf) - len(buf)
		if over := int64(len(buf)) + int64(room) - limit - 1; over > 0 {
			room -= int(over) // read at most limit+1 bytes in all
		}
		n, err := r.Body.Read(buf[len(buf) : len(buf)+room])
		buf = buf[:len(buf)+n]
		if int64(len(buf)) > limit {
			return buf, ErrTooLarge
		}
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// A Pool recycles the byte slices that requests are read into and
// responses are encoded into, so that a request in the steady state
// allocates none. The zero value is ready to use.
type Pool struct {
	pool sync.Pool
}

// maxPooled is the capacity above which a buffer is dropped instead of
// pooled, so that one large request does not pin memory for ever.
const maxPooled = 64 << 10

// Get returns an empty buffer.
func (p *Pool) Get() *[]byte {
	if b, ok := p.pool.Get().(*[]byte); ok {
		return b
	}
	b := make([]byte, 0, 2048)
	return &b
}

// Put returns b to the pool. The caller must not use it afterwards.
func (p *Pool) Put(b *[]byte) {
	if cap(*b) > maxPooled {
		return
	}
	*b = (*b)[:0]
	p.pool.Put(b)
}
