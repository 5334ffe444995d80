package petstoretest

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/petstore-go/petstore"
)

// create adds p through POST /pets and returns the pet as created. It
// checks the answer against clauseCreate and stops the subtest when the pet
// was not created.
func (st *serverT) create(p petstore.NewPet) petstore.Pet {
	return st.createAs(p, "application/json")
}

// createAs is create with the given Content-Type.
func (st *serverT) createAs(p petstore.NewPet, contentType string) petstore.Pet {
	return st.createRaw(petBody(p), contentType, p)
}

// createRaw sends body, which must create p, with the given Content-Type,
// as create does.
func (st *serverT) createRaw(body []byte, contentType string, p petstore.NewPet) petstore.Pet {
	req := st.newRequest(http.MethodPost, st.url("/pets"), body)
	req.Header.Set("Content-Type", contentType)
	x := st.do(req)
	x.sent = body
	if x.resp.StatusCode != http.StatusCreated {
		st.errorfClause(clauseCreate, "%s: status (-want +got):\n-\t%d\n+\t%d\nbody: %s", x, http.StatusCreated, x.resp.StatusCode, snippet(x.body))
		st.t.FailNow()
	}
	got, ok := st.pet(clauseCreate, x)
	if !ok {
		st.t.FailNow()
	}
	if got.ID <= 0 {
		st.errorfClause(clauseCreate, "%s: id %d is not positive", x, got.ID)
	}
	st.diffClause(clauseCreate, fmt.Sprintf("%s: the pet created", x), p, got.NewPet)

	loc := x.resp.Header.Values("Location")
	resolved := fmt.Sprintf("%q", loc)
	if len(loc) == 1 {
		if ref, err := url.Parse(loc[0]); err == nil {
			resolved = x.req.URL.ResolveReference(ref).String()
		}
	}
	st.diffClause(clauseCreate, fmt.Sprintf("%s: Location %q resolved against the request's URL", x, loc),
		st.url("/pets/"+strconv.FormatInt(got.ID, 10)), resolved)
	return got
}

// get fetches the pet with the given ID and reports a violation when it is
// not want.
func (st *serverT) get(rawURL string, want petstore.Pet) *exchange {
	x := st.send(http.MethodGet, rawURL, nil)
	if st.wantStatus(x, http.StatusOK) {
		if got, ok := st.pet(st.clause, x); ok {
			st.diff(fmt.Sprintf("%s: the pet", x), want, got)
		}
	}
	return x
}

// petBody returns p as a request body.
func petBody(p petstore.NewPet) []byte {
	b, err := json.Marshal(p)
	if err != nil {
		panic(err) // a NewPet always marshals
	}
	return b
}

// petURL returns the URL of the pet with the given ID.
func (st *serverT) petURL(id int64) string { return st.url("/pets/" + strconv.FormatInt(id, 10)) }

// longName returns a name unique to the subtest that is exactly
// petstore.MaxNameLength characters long.
func (st *serverT) longName() string {
	n := st.name("long")
	return n + strings.Repeat("𝄞", petstore.MaxNameLength-utf8.RuneCountInString(n))
}

func httpCreate(st *serverT) {
	for _, tc := range []struct {
		pet         petstore.NewPet
		contentType string
	}{
		{petstore.NewPet{Name: st.name("Rex"), CategoryID: 1, Status: petstore.StatusAvailable}, "application/json"},
		{petstore.NewPet{Name: st.name("Ünïcødé 名前 🐕"), CategoryID: math.MaxInt64, Status: petstore.StatusPending}, "application/json; charset=utf-8"},
		{petstore.NewPet{Name: st.name(`quote " backslash \ <b>&amp;</b> 'apostrophe'`), CategoryID: 1 << 40, Status: petstore.StatusSold}, "Application/JSON"},
		{petstore.NewPet{Name: st.name("without a status"), CategoryID: 2}, "application/json"},
		{petstore.NewPet{Name: st.longName(), CategoryID: math.MaxInt64 - 1}, "application/json;charset=UTF-8"},
	} {
		p := st.createAs(tc.pet, tc.contentType)
		st.get(st.petURL(p.ID), p)
	}
	// Bodies that a JSON decoder must read as the pet, NAME standing for a
	// name unique to the run.
	long := st.name("long")
	long += strings.Repeat("é", petstore.MaxNameLength-utf8.RuneCountInString(long))
	for _, tc := range []struct {
		body, contentType string
		want              petstore.NewPet
	}{
		{`{"name":"NAME","categoryId":1,"status":"pending"}`, "application/json", petstore.NewPet{Name: "NAME", CategoryID: 1, Status: petstore.StatusPending}},
		{`{"na\u006de":"NAME","categoryId":1}`, "application/json", petstore.NewPet{Name: "NAME", CategoryID: 1}},
		{`{"name":"\u00e9\ud83d\udc15\/ NAME","categoryId":2,"status":"sold"}`, "application/json", petstore.NewPet{Name: "é🐕/ NAME", CategoryID: 2, Status: petstore.StatusSold}},
		{`{"name":"\ud83d\udc36 NAME","categoryId":1}`, "application/json", petstore.NewPet{Name: "🐶 NAME", CategoryID: 1}},
		{"{\"name\":\"\xef\xbb\xbfNAME\",\"categoryId\":1}", "application/json", petstore.NewPet{Name: "\ufeffNAME", CategoryID: 1}},
		{`{"name":"` + long + `","categoryId":1}`, "application/json", petstore.NewPet{Name: long, CategoryID: 1}},
		{`{"categoryId":9223372036854775807,"name":"Ünïcødé 🐕 NAME"}`, "application/json; charset=utf-8", petstore.NewPet{Name: "Ünïcødé 🐕 NAME", CategoryID: math.MaxInt64}},
		{`{"name":"NAME","categoryId":1}`, "APPLICATION/JSON", petstore.NewPet{Name: "NAME", CategoryID: 1}},
		{` { "name" : "A\"<b>\\ NAME" , "categoryId" : 1 } `, "Application/JSON", petstore.NewPet{Name: `A"<b>\ NAME`, CategoryID: 1}},
	} {
		n := st.name("raw")
		want := tc.want
		want.Name = strings.ReplaceAll(want.Name, "NAME", n)
		p := st.createRaw([]byte(strings.ReplaceAll(tc.body, "NAME", n)), tc.contentType, want)
		st.get(st.petURL(p.ID), p)
	}
}

func httpGet(st *serverT) {
	a := st.create(petstore.NewPet{Name: st.name("first"), CategoryID: 3, Status: petstore.StatusSold})
	b := st.create(petstore.NewPet{Name: st.name("second"), CategoryID: 4})
	st.get(st.petURL(a.ID), a)
	st.get(st.petURL(b.ID), b)
}

// deprecation is what testGetDeprecation compares.
type deprecation struct {
	Deprecation     string // "@<unix seconds>" when well formed, else the values
	Sunset          string // "an HTTP date" when well formed, else the values
	SunsetNotBefore bool   // the sunset is not before the deprecation
	Successor       string // the successor-version link, resolved
}

var deprecationValue = regexp.MustCompile(`^@[0-9]+$`)

func httpGetDeprecation(st *serverT) {
	p := st.create(petstore.NewPet{Name: st.name("deprecated"), CategoryID: 1})
	want := deprecation{Deprecation: "@<unix seconds>", Sunset: "an HTTP date", SunsetNotBefore: true, Successor: st.url("/pets")}
	for _, method := range []string{http.MethodGet, http.MethodHead} {
		x := st.send(method, st.petURL(p.ID), nil)
		if !st.wantStatus(x, http.StatusOK) {
			continue
		}
		h := x.resp.Header
		got := deprecation{Deprecation: fmt.Sprintf("%q", h.Values("Deprecation")), Sunset: fmt.Sprintf("%q", h.Values("Sunset"))}
		var deprecated, sunset int64
		if v := h.Values("Deprecation"); len(v) == 1 && deprecationValue.MatchString(v[0]) {
			got.Deprecation = want.Deprecation
			deprecated, _ = strconv.ParseInt(v[0][1:], 10, 64)
		}
		if v := h.Values("Sunset"); len(v) == 1 {
			if t, err := http.ParseTime(v[0]); err == nil && t.UTC().Format(http.TimeFormat) == v[0] {
				got.Sunset = want.Sunset
				sunset = t.Unix()
			}
		}
		got.SunsetNotBefore = got.Deprecation == want.Deprecation && got.Sunset == want.Sunset && sunset >= deprecated
		if u := st.linkRel(x, "successor-version"); u != nil {
			got.Successor = u.String()
		}
		st.diff(fmt.Sprintf("%s: deprecation headers (Deprecation %q, Sunset %q, Link %q)", x, h.Values("Deprecation"), h.Values("Sunset"), h.Values("Link")), want, got)
	}
}

func httpConditional(st *serverT) {
	a := st.create(petstore.NewPet{Name: st.name("tagged"), CategoryID: 1})
	b := st.create(petstore.NewPet{Name: st.name("tagged"), CategoryID: 1})
	path := "/pets/" + strconv.FormatInt(a.ID, 10)
	x := st.get(st.url(path), a)
	tag := x.resp.Header.Get("ETag")
	final := map[string]string{"ETag": tag, "Cache-Control": "private, max-age=3600", "Vary": "Authorization"}
	if !st.diff(x.String()+": the headers of a pet", final, map[string]string{
		"ETag": cmp.Or(tag, "a strong tag"), "Cache-Control": x.resp.Header.Get("Cache-Control"), "Vary": x.resp.Header.Get("Vary"),
	}) {
		return
	}
	inm := func(v string) http.Header { return http.Header{"If-None-Match": {v}} }
	reqs := []request{
		{path: path, header: inm(tag), status: 304, want: final},
		{method: http.MethodHead, path: path, header: inm(tag), status: 304, want: final},
		{path: path, header: inm("W/" + tag), status: 304, want: final},
		{path: path, header: inm(`"0000000000000000", ` + tag), status: 304, want: final},
		{path: path, header: inm("*"), status: 304, want: final},
		{path: path, header: inm("junk"), status: 200, want: final},
		{path: "/pets/0", header: inm("*"), status: 404, code: "not_found", want: map[string]string{"ETag": "", "Cache-Control": "no-store", "Vary": ""}},
	}

	// A page of one pet, with more after it, is full.
	page := st.send(http.MethodGet, st.url("/pets?limit=1"), nil)
	next := st.linkRel(page, "next")
	if !st.wantStatus(page, http.StatusOK) || next == nil {
		st.errorf("%s: no next Link, though more pets follow: Link %q", page, page.resp.Header.Values("Link"))
		return
	}
	pageTag := page.resp.Header.Get("ETag")
	reqs = append(reqs, request{path: "/pets?limit=1", header: inm(pageTag), status: 304, want: map[string]string{
		"ETag": pageTag, "Cache-Control": "private, max-age=3600", "Vary": "Authorization", "Link": page.resp.Header.Get("Link"),
	}})
	st.sendAll(reqs)

	// Another pet, or the next page, with a tag that is not theirs.
	req := st.newRequest(http.MethodGet, st.petURL(b.ID), nil)
	req.Header.Set("If-None-Match", tag)
	if other := st.do(req); st.wantStatus(other, http.StatusOK) && other.resp.Header.Get("ETag") == tag {
		st.errorf("%s: pets %d and %d have the same ETag %s", other, a.ID, b.ID, tag)
	}
	req = st.newRequest(http.MethodGet, next.String(), nil)
	req.Header.Set("If-None-Match", pageTag)
	if other := st.do(req); st.wantStatus(other, http.StatusOK) && other.resp.Header.Get("ETag") == pageTag {
		st.errorf("%s: two pages have the same ETag %s", other, pageTag)
	}
}
