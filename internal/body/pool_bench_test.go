package body_test

import (
	"io"
	"testing"

	"github.com/petstore-go/petstore/internal/body"
)

// BenchmarkPool encodes a page's worth of bytes (1,300, a list of 20 pets)
// into a buffer from a Pool (impl=pool) and into a buffer allocated for the
// response (impl=make), and writes it to an io.Writer, as the handler does.
//
//	go test -run '^$' -bench Pool -benchmem -count 6 ./internal/body
func BenchmarkPool(b *testing.B) {
	page := make([]byte, 1300)
	w := io.Discard
	b.Run("impl=pool", func(b *testing.B) {
		var p body.Pool
		b.ReportAllocs()
		for b.Loop() {
			buf := p.Get()
			*buf = append(*buf, page...)
			_, _ = w.Write(*buf)
			p.Put(buf)
		}
	})
	b.Run("impl=make", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			buf := make([]byte, 0, 2048)
			buf = append(buf, page...)
			_, _ = w.Write(buf)
		}
	})
}
