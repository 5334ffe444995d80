package jsontext

import (
	"strconv"
	"testing"
)

// benchInts are the numbers of a page of 20 pets as the handler encodes
// them: 20 IDs around 12,345 and their categories, 1 to 7.
var benchInts = func() []int64 {
	var ns []int64
	for id := int64(12345); id < 12345+20; id++ {
		ns = append(ns, id, id%7+1)
	}
	return ns
}()

// BenchmarkAppendInt appends the numbers of a page of 20 pets with AppendInt
// (impl=jsontext) and with strconv.AppendInt (impl=strconv), which it
// replaces:
//
//	go test -run '^$' -bench AppendInt -count 6 ./internal/jsontext > enc.txt
//	benchstat -col /impl enc.txt
func BenchmarkAppendInt(b *testing.B) {
	impls := []struct {
		name string
		fn   func([]byte, int64) []byte
	}{
		{"jsontext", AppendInt},
		{"strconv", func(dst []byte, n int64) []byte { return strconv.AppendInt(dst, n, 10) }},
	}
	for _, impl := range impls {
		b.Run("impl="+impl.name, func(b *testing.B) {
			buf := make([]byte, 0, 512)
			for b.Loop() {
				buf = buf[:0]
				for _, n := range benchInts {
					buf = impl.fn(buf, n)
				}
			}
		})
	}
}
