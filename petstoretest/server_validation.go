package petstoretest

import (
	"bytes"
	"io"
	"net/http"

	"github.com/petstore-go/petstore"
)

func httpListUnknownParams(st *serverT) {
	st.create(petstore.NewPet{Name: st.name("listed"), CategoryID: 1})
	st.create(petstore.NewPet{Name: st.name("listed"), CategoryID: 1})
	for _, tc := range []struct {
		query string
		limit int // the number of pets of the page, or 0 for any
	}{
		{"limit=1&foo=bar", 1},
		{"page=3&limit=1&offset=2", 1},
		{"limit=1&sort=desc&Status=lost&LIMIT=0", 1},
		{"%6Cimit=1", 1}, // limit, percent-encoded
		{"foo=bar", 0},
		{"%zz=1", 0},
		{"Limit=0", 0},
	} {
		x := st.send(http.MethodGet, st.url("/pets?"+tc.query), nil)
		if !st.wantStatus(x, http.StatusOK) {
			continue
		}
		if pets, ok := st.pets(st.clause, x); ok && tc.limit > 0 && len(pets) != tc.limit {
			st.errorf("%s: %d pets, want %d: the limit applies and the other parameters are ignored", x, len(pets), tc.limit)
		}
	}
}

// hiddenLength hides a reader's length from net/http, so that the body is
// sent chunked, without Content-Length.
type hiddenLength struct{ r io.Reader }

func (h hiddenLength) Read(p []byte) (int, error) { return h.r.Read(p) }

func httpCreateTooLarge(st *serverT) {
	limit := st.e.MaxBodyBytes
	// A valid pet padded with spaces to limit bytes, then to one more.
	pet := petBody(petstore.NewPet{Name: st.name("at the size limit"), CategoryID: 1})
	if pad := limit - int64(len(pet)); pad >= 0 {
		body := append(pet, bytes.Repeat([]byte(" "), int(pad))...)
		x := st.send(http.MethodPost, st.url("/pets"), body)
		if !st.wantStatus(x, http.StatusCreated) {
			st.errorf("a body of exactly Endpoint.MaxBodyBytes (%d bytes) must be read", limit)
		}
	}
	big := append(petBody(petstore.NewPet{Name: st.name("over the size limit"), CategoryID: 1}), bytes.Repeat([]byte(" "), int(limit))...)
	big = big[:limit+1]
	name := []byte(`{"name":"` + st.name("a long name") + string(bytes.Repeat([]byte("a"), int(limit))) + `","categoryId":1}`)
	for _, body := range [][]byte{big, name, bytes.Repeat([]byte("["), int(limit)+1)} {
		st.wantError(st.send(http.MethodPost, st.url("/pets"), body), http.StatusRequestEntityTooLarge, "payload_too_large")
	}

	req := st.newRequest(http.MethodPost, st.url("/pets"), nil)
	req.Header.Set("Content-Type", "application/json")
	req.Body = io.NopCloser(hiddenLength{bytes.NewReader(big)})
	req.ContentLength = -1
	st.wantError(st.do(req), http.StatusRequestEntityTooLarge, "payload_too_large")
}
