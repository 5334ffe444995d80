package petstoretest

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/petstore-go/petstore"
)

func httpUnknownPath(st *serverT) {
	for _, path := range []string{"/", "/pet", "/pets/", "/pets/1/", "/pets/1/photos", "/store/orders", "/PETS", "/pets.json"} {
		st.wantError(st.send(http.MethodGet, st.url(path), nil), http.StatusNotFound, "not_found")
	}
	body := petBody(petstore.NewPet{Name: st.name("unknown path"), CategoryID: 1})
	for _, path := range []string{"/pets/", "/pet", "/store/orders"} {
		st.wantError(st.send(http.MethodPost, st.url(path), body), http.StatusNotFound, "not_found")
	}
}

// allowSet returns the methods of Allow headers, sorted.
func allowSet(values []string) []string {
	var methods []string
	for _, v := range values {
		for m := range strings.SplitSeq(v, ",") {
			if m = strings.TrimSpace(m); m != "" {
				methods = append(methods, m)
			}
		}
	}
	slices.Sort(methods)
	return methods
}

func httpMethodNotAllowed(st *serverT) {
	p := st.create(petstore.NewPet{Name: st.name("methods"), CategoryID: 1})
	for _, tc := range []struct{ url, pattern string }{
		{st.url("/pets"), "/pets"},
		{st.petURL(p.ID), "/pets/{petId}"},
	} {
		allow := allowSet([]string{petstore.Allow(tc.pattern)})
		for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodDelete, http.MethodPut, http.MethodPatch, http.MethodOptions} {
			if slices.Contains(allow, m) {
				continue
			}
			x := st.send(m, tc.url, nil)
			st.wantError(x, http.StatusMethodNotAllowed, "method_not_allowed")
			st.diff(fmt.Sprintf("%s: the methods of Allow %q", x, x.resp.Header.Values("Allow")), allow, allowSet(x.resp.Header.Values("Allow")))
		}
	}
	// The pet is still there.
	st.get(st.petURL(p.ID), p)
}

// headHeaders are the headers that HEAD must answer as GET does.
var headHeaders = []string{"Content-Type", "Cache-Control", "X-Content-Type-Options", "Link", "Deprecation", "Sunset", "Www-Authenticate", "Allow"}

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
