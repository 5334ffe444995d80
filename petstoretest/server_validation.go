package petstoretest

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/petstore-go/petstore"
)

// invalidQueries sends GET /pets with each query and checks the 400 answer.
func (st *serverT) invalidQueries(queries ...string) {
	for _, q := range queries {
		st.wantError(st.send(http.MethodGet, st.url("/pets?"+q), nil), http.StatusBadRequest, "invalid_parameter")
	}
}

func httpListInvalidLimit(st *serverT) {
	st.invalidQueries(
		"limit=0", "limit=101", "limit=-1", "limit=1000000000000000000000", "limit=abc",
		"limit=1.5", "limit=1e1", "limit=", "limit=%20", "limit=%31%30%31", "limit=1&limit=2",
	)
}

func httpListInvalidStatus(st *serverT) {
	st.invalidQueries(
		"status=unknown", "status=AVAILABLE", "status=Available", "status=", "status=available,sold",
		"status=%20available", "status=sold&limit=1&status=lost",
	)
}

func httpListInvalidCursor(st *serverT) {
	st.invalidQueries("cursor=%2A%2A%2A", "cursor=%21", "cursor=a%20b", "cursor=%ZZ", "limit=5&cursor=%3C%3E")
}

func httpListUnknownParams(st *serverT) {
	st.create(petstore.NewPet{Name: st.name("listed"), CategoryID: 1})
	st.create(petstore.NewPet{Name: st.name("listed"), CategoryID: 1})
	for _, q := range []string{"limit=1&foo=bar", "page=3&limit=1&offset=2", "limit=1&sort=desc&Status=lost&LIMIT=0"} {
		x := st.send(http.MethodGet, st.url("/pets?"+q), nil)
		if !st.wantStatus(x, http.StatusOK) {
			continue
		}
		if pets, ok := st.pets(st.clause, x); ok && len(pets) != 1 {
			st.errorf("%s: %d pets, want 1: the limit applies and the other parameters are ignored", x, len(pets))
		}
	}
}

func httpGetInvalidID(st *serverT) {
	for _, id := range []string{
		"abc", "1.5", "+1", "0x10", "1e3", "%201", "1%20", "%D9%A1", // an Arabic-Indic digit one
		"9223372036854775808", "-9223372036854775809", "99999999999999999999",
	} {
		st.wantError(st.send(http.MethodGet, st.url("/pets/"+id), nil), http.StatusBadRequest, "invalid_parameter")
	}
}

func httpCreateInvalidBody(st *serverT) {
	var names []string
	name := func() string {
		n := st.name("invalid")
		names = append(names, n)
		return fmt.Sprintf("%q", n)
	}
	bodies := []string{
		``,
		`null`,
		`[]`,
		`"pet"`,
		`[{"name":` + name() + `,"categoryId":1}]`,
		`{"name":` + name() + `,"categoryId":1} {}`,
		`{"name":` + name() + `,"categoryId":1}x`,
		`{"name":` + name() + `,"categoryId":1`,
		`{"name":1,"categoryId":1}`,
		`{"name":` + name() + `,"categoryId":"1"}`,
		`{"name":` + name() + `,"categoryId":1.5}`,
		`{"name":` + name() + `,"categoryId":true}`,
		`{"name":` + name() + `,"categoryId":9223372036854775808}`,
		`{"categoryId":1}`,
		`{"name":` + name() + `}`,
		`{"name":null,"categoryId":1}`,
		`{"name":` + name() + `,"categoryId":null}`,
		`{"name":` + name() + `,"categoryId":1,"color":"red"}`,
		`{"id":5,"name":` + name() + `,"categoryId":1}`,
		`{"name":"","categoryId":1}`,
		`{"name":"   ","categoryId":1}`,
		`{"name":"` + strings.Repeat("a", petstore.MaxNameLength+1) + `","categoryId":1}`,
		`{"name":"` + strings.Repeat("é", petstore.MaxNameLength+1) + `","categoryId":1}`,
		"{\"name\":\"invalid \xff UTF-8\",\"categoryId\":1}",
		`{"name":"bell \u0007","categoryId":1}`,
		`{"name":"tab\there","categoryId":1}`,
		`{"name":"line\nbreak","categoryId":1}`,
		`{"name":` + name() + `,"categoryId":0}`,
		`{"name":` + name() + `,"categoryId":-1}`,
		`{"name":` + name() + `,"categoryId":1,"status":"lost"}`,
		`{"name":` + name() + `,"categoryId":1,"status":""}`,
		`{"name":` + name() + `,"categoryId":1,"status":1}`,
	}
	for _, body := range bodies {
		st.wantError(st.send(http.MethodPost, st.url("/pets"), []byte(body)), http.StatusBadRequest, "invalid_body")
	}

	// None of them was stored.
	created := map[string]bool{}
	st.walk(st.url("/pets?limit=100"), func(p listPage) bool {
		for _, pet := range p.pets {
			for _, n := range names {
				if pet.Name == n {
					created[n] = true
				}
			}
		}
		return true
	})
	st.diff("pets created by rejected bodies", map[string]bool{}, created)
}

func httpCreateUnsupportedMediaType(st *serverT) {
	body := petBody(petstore.NewPet{Name: st.name("wrong media type"), CategoryID: 1})
	for _, ct := range []string{"", "text/plain", "application/xml", "application/json-patch+json", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"} {
		req := st.newRequest(http.MethodPost, st.url("/pets"), body)
		req.Header.Del("Content-Type")
		if ct != "" {
			req.Header.Set("Content-Type", ct)
		}
		x := st.do(req)
		st.wantError(x, http.StatusUnsupportedMediaType, "unsupported_media_type")
		st.diff(fmt.Sprintf("%s with Content-Type %q: Accept-Post", x, ct), []string{"application/json"}, x.resp.Header.Values("Accept-Post"))
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
	st.wantError(st.send(http.MethodPost, st.url("/pets"), big), http.StatusRequestEntityTooLarge, "payload_too_large")

	req := st.newRequest(http.MethodPost, st.url("/pets"), nil)
	req.Header.Set("Content-Type", "application/json")
	req.Body = io.NopCloser(hiddenLength{bytes.NewReader(big)})
	req.ContentLength = -1
	st.wantError(st.do(req), http.StatusRequestEntityTooLarge, "payload_too_large")
}
