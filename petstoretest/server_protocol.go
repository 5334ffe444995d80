package petstoretest

import (
	"fmt"
	"net/http"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/internal/wire"
)

func httpMethodNotAllowed(st *serverT) {
	p := st.create(petstore.NewPet{Name: st.name("methods"), CategoryID: 1})
	pets, pet := wire.Allow("/pets"), wire.Allow("/pets/{petId}")
	id := fmt.Sprint(p.ID)
	var reqs []request
	for _, tc := range []struct{ method, path, body, allow string }{
		{http.MethodDelete, "/pets", "", pets},
		{http.MethodPut, "/pets", st.validBody(), pets},
		{http.MethodPatch, "/pets", "", pets},
		{http.MethodOptions, "/pets", "", pets},
		{http.MethodTrace, "/pets", "", pets},
		{"get", "/pets", "", pets},
		{http.MethodPost, "/pets/" + id, st.validBody(), pet},
		{http.MethodPost, "/pets/" + id, `{}`, pet},
		{http.MethodPut, "/pets/" + id, st.validBody(), pet},
		{http.MethodPut, "/pets/" + id, `{}`, pet},
		{http.MethodPatch, "/pets/" + id, st.validBody(), pet},
		{http.MethodDelete, "/pets/" + id, "", pet},
		{http.MethodOptions, "/pets/" + id, "", pet},
	} {
		reqs = append(reqs, request{method: tc.method, path: tc.path, body: tc.body,
			status: 405, code: "method_not_allowed", want: map[string]string{"Allow": tc.allow}})
	}
	st.sendAll(reqs)
	// The pet is still there, unchanged.
	st.get(st.petURL(p.ID), p)
}

// headHeaders are the headers that HEAD must answer as GET does.
var headHeaders = []string{"Content-Type", "Cache-Control", "X-Content-Type-Options", "Link", "Deprecation", "Sunset", "Www-Authenticate", "Allow", "Etag", "Vary"}

func httpHead(st *serverT) {
	p := st.create(petstore.NewPet{Name: st.name("head"), CategoryID: 1, Status: petstore.StatusPending})
	st.create(petstore.NewPet{Name: st.name("head"), CategoryID: 1})
	for _, path := range []string{"/pets?limit=1", "/pets/" + fmt.Sprint(p.ID), "/pets/0", "/pets/x", "/pets?limit=0", "/pets/1/photos"} {
		get := st.send(http.MethodGet, st.url(path), nil)
		head := st.send(http.MethodHead, st.url(path), nil)
		st.diff(fmt.Sprintf("HEAD %s: status as GET's", st.url(path)), get.resp.StatusCode, head.resp.StatusCode)
		for _, h := range headHeaders {
			st.diff(fmt.Sprintf("HEAD %s: header %s as GET's", st.url(path), h), get.resp.Header.Values(h), head.resp.Header.Values(h))
		}
		if len(head.body) > 0 {
			st.errorf("HEAD %s: a body of %d bytes", st.url(path), len(head.body))
		}
	}
}
