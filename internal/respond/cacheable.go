package respond

import (
	"hash/crc32"
	"net/http"
	"strconv"
)

// TagLen is the length of a Tag: a quote, 16 hexadecimal digits, a quote.
const TagLen = 18

// A Tag is a strong entity tag as the ETag header carries it, quotes
// included.
type Tag [TagLen]byte

// NewTag returns the tag of a representation: its body, and variant, a
// byte that tells apart two representations with the same body and other
// headers (a page of a list with and without a link to the next page). The
// 64 bits are two CRC-32 checksums of different polynomials, which
// processors compute in hardware: a tag tells a representation from the
// others of the same URL, and is no defence against a forged body.
func NewTag(body []byte, variant byte) Tag {
	// The variant is mixed in after the checksums: a byte slice of it would
	// escape to the heap through crc32's dispatch.
	mix := uint32(variant) * 0x9e3779b9
	c := crc32.Checksum(body, crc32.MakeTable(crc32.Castagnoli)) ^ mix // a table made once
	i := crc32.ChecksumIEEE(body) ^ mix
	var t Tag
	t[0], t[TagLen-1] = '"', '"'
	const hex = "0123456789abcdef"
	for k := range 8 {
		t[1+k] = hex[c>>(28-4*k)&0xf]
		t[9+k] = hex[i>>(28-4*k)&0xf]
	}
	return t
}

// Cacheable answers r, a GET or HEAD, with 200 and the JSON document body
// as JSON does, but as a representation that a private cache may keep as
// cacheControl says, with the strong entity tag tag and
// Vary: Authorization (the answer is the caller's). When the request's
// If-None-Match matches tag, it answers 304 Not Modified with the same
// headers and no body instead.
func Cacheable(w http.ResponseWriter, r *http.Request, body []byte, tag Tag, cacheControl []string) {
	// The ETag and Content-Length values are two parts of one string, held
	// in one array: two allocations for the two headers.
	var b [TagLen + 20]byte
	s := string(strconv.AppendInt(b[:copy(b[:], tag[:])], int64(len(body)), 10))
	values := &[2]string{s[:TagLen], s[TagLen:]}
	h := w.Header()
	h["Etag"] = values[0:1:1]
	h["Cache-Control"] = cacheControl
	h["Vary"] = varyAuthorization
	h["X-Content-Type-Options"] = noSniff
	if NoneMatch(r.Header["If-None-Match"], tag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h["Content-Length"] = values[1:2:2]
	h["Content-Type"] = jsonContentType
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body) // the client has gone away; nothing left to tell it
	}
}

// NoneMatch reports whether an If-None-Match header with the values
// values matches tag, by the weak comparison that RFC 9110 prescribes for
// it: "*", or a listed tag, weak (W/"...") or not, with tag's opaque part.
// A malformed list matches nothing from the first malformed entry on. It
// allocates nothing.
func NoneMatch(values []string, tag Tag) bool {
	for _, v := range values {
		for {
			for v != "" && (v[0] == ' ' || v[0] == '\t' || v[0] == ',') {
				v = v[1:]
			}
			if v == "" {
				break
			}
			if v[0] == '*' {
				return true
			}
			if len(v) >= 2 && v[:2] == "W/" {
				v = v[2:]
			}
			if v == "" || v[0] != '"' {
				break
			}
			end := 1
			for end < len(v) && v[end] != '"' {
				end++
			}
			if end == len(v) {
				break
			}
			if v[:end+1] == string(tag[:]) {
				return true
			}
			v = v[end+1:]
		}
	}
	return false
}
