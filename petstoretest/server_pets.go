package petstoretest

import (
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
	body := petBody(p)
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

func httpGetUnknown(st *serverT) {
	for _, id := range []string{"0", "-1", "9223372036854775807", "-9223372036854775808"} {
		st.wantError(st.send(http.MethodGet, st.url("/pets/"+id), nil), http.StatusNotFound, "not_found")
	}
}
