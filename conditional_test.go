package petstore_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/memstore"
)

// conditionalGet GETs target from srv with the test key and, when tag is
// not empty, If-None-Match: tag. It returns the status, the ETag,
// Cache-Control and Link headers and the body.
func conditionalGet(t *testing.T, srv *httptest.Server, target, tag string) (status int, etag, cacheControl, link, body string) {
	t.Helper()
	header := http.Header{"Authorization": {"Bearer " + testKey}}
	if tag != "" {
		header.Set("If-None-Match", tag)
	}
	resp, body := fetch(t, srv, srv.URL+target, header)
	return resp.StatusCode, resp.Header.Get("ETag"), resp.Header.Get("Cache-Control"), resp.Header.Get("Link"), body
}

// addPets adds n pets to store.
func addPets(t *testing.T, store petstore.Store, n int) {
	t.Helper()
	for range n {
		mustAdd(t, store, petstore.NewPet{Name: "p", CategoryID: 1})
	}
}

// TestConditionalLastFullPageGrows checks a full page that no page follows
// yet: it must be revalidated, it answers 304 while no pet is added, and
// once one is, the same tag gets the page again with its new Link and a
// new tag, now final.
func TestConditionalLastFullPageGrows(t *testing.T) {
	store := memstore.New()
	addPets(t, store, 3)
	srv := newServer(t, newHandler(t, store))
	const target = "/v1/pets?limit=3"

	status, tag, cc, link, body := conditionalGet(t, srv, target, "")
	if status != 200 || tag == "" || cc != "private, no-cache" || link != "" {
		t.Fatalf("the full last page: %d, ETag %q, Cache-Control %q, Link %q", status, tag, cc, link)
	}
	if status, _, _, _, _ := conditionalGet(t, srv, target, tag); status != 304 {
		t.Errorf("the full last page with its tag = %d, want 304", status)
	}

	addPets(t, store, 1)
	status, grown, cc, link, grownBody := conditionalGet(t, srv, target, tag)
	if status != 200 || link == "" || grown == tag || cc != "private, max-age=3600" || grownBody != body {
		t.Errorf("after a pet was added, the old tag got %d, ETag %q (old %q), Cache-Control %q, Link %q; want 200 with a Link, a new tag and a final Cache-Control",
			status, grown, tag, cc, link)
	}
	if status, _, _, _, _ := conditionalGet(t, srv, target, grown); status != 304 {
		t.Errorf("the page with its new tag = %d, want 304", status)
	}
}

// TestConditionalGrowingPage checks that a page with fewer than limit pets
// has no ETag, may not be stored, and is never answered 304, whatever the
// client sends, also after it has grown.
func TestConditionalGrowingPage(t *testing.T) {
	store := memstore.New()
	addPets(t, store, 2)
	srv := newServer(t, newHandler(t, store))
	const target = "/v1/pets?limit=4"
	_, fullTag, _, _, _ := conditionalGet(t, srv, "/v1/pets?limit=2", "")
	for i, inm := range []string{"", "*", fullTag, `W/"0000000000000000"`} {
		if i > 0 {
			addPets(t, store, 1) // the page grows: 3, then 4 pets, then 5 (still 4 on the page)
		}
		status, tag, cc, _, body := conditionalGet(t, srv, target, inm)
		pets := 2 + i
		if pets >= 4 {
			// Full now: final, with a tag that no earlier answer had.
			if status != 200 || tag == "" || tag == fullTag || body == "" {
				t.Errorf("full page with If-None-Match %q: %d, ETag %q", inm, status, tag)
			}
			continue
		}
		if status != 200 || tag != "" || cc != "no-store" || body == "" {
			t.Errorf("page of %d pets with If-None-Match %q: %d, ETag %q, Cache-Control %q, body %q; want 200, no tag, no-store",
				pets, inm, status, tag, cc, body)
		}
	}
}
