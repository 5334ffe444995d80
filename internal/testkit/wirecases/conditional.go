package wirecases

import (
	"net/http"
)

// conditionalCases are the conditional GETs: a pet and a full page have an
// ETag, and If-None-Match with it (or "*", or its weak form) answers 304;
// a page that can still grow has none and is never answered 304.
func conditionalCases() []Case {
	pet1 := Tag(Pet(1), false)
	fullPage := Tag(Page(1, 10), true)
	lastFull := Tag(Page(21, 30), false)
	final := map[string]string{"ETag": pet1, "Cache-Control": "private, max-age=3600", "Vary": "Authorization"}
	ifNoneMatch := func(v string) http.Header { return http.Header{"If-None-Match": {v}} }
	with := func(m map[string]string, k, v string) map[string]string {
		out := map[string]string{k: v}
		for k, v := range m {
			if _, ok := out[k]; !ok {
				out[k] = v
			}
		}
		return out
	}
	pageHeaders := with(with(final, "ETag", fullPage), "Link", `<?limit=10&cursor=a>; rel="next"`)
	lastHeaders := with(with(with(final, "ETag", lastFull), "Cache-Control", "private, no-cache"), "Link", "")
	growing := map[string]string{"ETag": "", "Cache-Control": "no-store", "Vary": ""}
	return []Case{
		{Name: "get has an ETag", Target: "/v1/pets/1", Status: 200, WantBody: Pet(1), WantHeader: final},
		{Name: "get with If-None-Match of its ETag", Target: "/v1/pets/1", Header: ifNoneMatch(pet1), Status: 304, WantHeader: final},
		{Name: "HEAD get with If-None-Match of its ETag", Method: http.MethodHead, Target: "/v1/pets/1", Header: ifNoneMatch(pet1), Status: 304, WantHeader: final},
		{Name: "get with the weak form of its ETag", Target: "/v1/pets/1", Header: ifNoneMatch("W/" + pet1), Status: 304, WantHeader: final},
		{Name: "get with its ETag in a list", Target: "/v1/pets/1", Header: ifNoneMatch(`"0000000000000000", ` + pet1), Status: 304, WantHeader: final},
		{Name: "get with If-None-Match *", Target: "/v1/pets/1", Header: ifNoneMatch("*"), Status: 304, WantHeader: final},
		{Name: "get with the ETag of another pet", Target: "/v1/pets/2", Header: ifNoneMatch(pet1), Status: 200, WantBody: Pet(2),
			WantHeader: with(final, "ETag", Tag(Pet(2), false))},
		{Name: "get with a malformed If-None-Match", Target: "/v1/pets/1", Header: ifNoneMatch("junk"), Status: 200, WantBody: Pet(1), WantHeader: final},
		{Name: "no such pet with If-None-Match *", Target: "/v1/pets/99", Header: ifNoneMatch("*"), Status: 404, Code: "not_found", WantHeader: growing},
		{Name: "full page has an ETag", Target: "/v1/pets?limit=10", Status: 200, WantBody: Page(1, 10), WantHeader: pageHeaders},
		{Name: "full page with If-None-Match of its ETag", Target: "/v1/pets?limit=10", Header: ifNoneMatch(fullPage), Status: 304, WantHeader: pageHeaders},
		{Name: "full page with the ETag of another page", Target: "/v1/pets?limit=10&cursor=a", Header: ifNoneMatch(fullPage), Status: 200,
			WantBody: Page(11, 20), WantHeader: with(with(pageHeaders, "ETag", Tag(Page(11, 20), true)), "Link", `<?limit=10&cursor=k>; rel="next"`)},
		{Name: "full last page must be revalidated", Target: "/v1/pets?limit=10&cursor=k", Status: 200, WantBody: Page(21, 30), WantHeader: lastHeaders},
		{Name: "full last page with If-None-Match of its ETag", Target: "/v1/pets?limit=10&cursor=k", Header: ifNoneMatch(lastFull), Status: 304, WantHeader: lastHeaders},
		{Name: "growing page has no ETag", Target: "/v1/pets?limit=20&cursor=k", Status: 200, WantBody: Page(21, 30), WantHeader: growing},
		{Name: "growing page with If-None-Match *", Target: "/v1/pets?limit=20&cursor=k", Header: ifNoneMatch("*"), Status: 200, WantBody: Page(21, 30), WantHeader: growing},
		{Name: "growing page with the ETag of its pets as a full page", Target: "/v1/pets?limit=20&cursor=k", Header: ifNoneMatch(lastFull), Status: 200,
			WantBody: Page(21, 30), WantHeader: growing},
	}
}
