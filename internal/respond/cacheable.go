package respond

import (
	"fmt"
	"hash/crc32"
	"net/http"
	"strconv"
)

// NewTag returns the strong entity tag, quotes included, of a
// representation: its body, and variant, a byte that tells apart two
// representations with the same body and other headers (a page of a list
// with and without a link to the next page). The 64 bits are two CRC-32
// checksums of different polynomials, which processors compute in
// hardware: a tag tells a representation from the others of the same URL,
// and is no defence against a forged body.
func NewTag(body []byte, variant byte) string {
	mix := uint32(variant) * 0x9e3779b9
	c := crc32.Checksum(body, castagnoli()) ^ mix
	i := crc32.ChecksumIEEE(body) ^ mix
	return fmt.Sprintf(`"%08x%08x"`, c, i)
}

// castagnoli returns the table of the Castagnoli polynomial, which
// crc32.MakeTable makes once and then returns again.
func castagnoli() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) }

// Header values of a cacheable answer. They are shared, never modified.
var varyAuthorization = []string{"Authorization"}

// Cacheable answers r, a GET or HEAD, with 200 and the JSON document body
// as JSON does, but as a representation that a private cache may keep as
// cacheControl says, with the strong entity tag tag and
// Vary: Authorization (the answer is the caller's). When the request's
// If-None-Match matches tag, it answers 304 Not Modified with the same
// headers and no body instead.
func Cacheable(w http.ResponseWriter, r *http.Request, body []byte, tag string, cacheControl []string) {
	h := w.Header()
	h["Etag"] = []string{tag}
	h["Cache-Control"] = cacheControl
	h["Vary"] = varyAuthorization
	h["X-Content-Type-Options"] = noSniff
	if NoneMatch(r.Header["If-None-Match"], tag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h["Content-Length"] = []string{strconv.Itoa(len(body))}
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
func NoneMatch(values []string, tag string) bool {
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
			if v[:end+1] == tag {
				return true
			}
			v = v[end+1:]
		}
	}
	return false
}
