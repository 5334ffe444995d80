package httpapi

import (
	"net/http"
	"strconv"
	"strings"
)

// PrefersProblem reports whether r's Accept header prefers
// application/problem+json to application/json: whether the quality that the
// header gives the first is greater than the one it gives the second, each
// taken from the most specific media range that matches it (RFC 9110,
// section 12.5.1). A request without Accept, or with a tie such as */*,
// prefers application/json, so a client that did not ask for problem
// details never gets them.
func PrefersProblem(r *http.Request) bool {
	problem, json := quality{}, quality{}
	for _, v := range r.Header["Accept"] {
		for part := range strings.SplitSeq(v, ",") {
			mediaRange, params, _ := strings.Cut(part, ";")
			mediaRange = strings.ToLower(strings.TrimSpace(mediaRange))
			q := acceptQ(params)
			problem.match(mediaRange, MediaTypeProblem, q)
			json.match(mediaRange, MediaTypeJSON, q)
		}
	}
	return problem.q > json.q
}

// A quality is the quality of one media type in an Accept header, from the
// most specific media range seen so far that matches it.
type quality struct {
	specificity int // 0: none seen, 1: */*, 2: type/*, 3: the type itself
	q           float64
}

// match takes the media range mr with quality q into account for the media
// type mt.
func (a *quality) match(mr, mt string, q float64) {
	s := 0
	switch {
	case mr == mt:
		s = 3
	case strings.HasSuffix(mr, "/*") && strings.HasPrefix(mt, mr[:len(mr)-1]):
		s = 2
	case mr == "*/*":
		s = 1
	}
	if s > a.specificity || s == a.specificity && s > 0 && q > a.q {
		a.specificity, a.q = s, q
	}
}

// acceptQ returns the q parameter among params (";q=0.5;level=1"), or 1
// when there is none, or 0 when it is malformed.
func acceptQ(params string) float64 {
	for p := range strings.SplitSeq(params, ";") {
		name, value, _ := strings.Cut(strings.TrimSpace(p), "=")
		if strings.EqualFold(name, "q") {
			q, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
			if err != nil || q < 0 || q > 1 {
				return 0
			}
			return q
		}
	}
	return 1
}
