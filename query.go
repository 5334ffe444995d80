package petstore

import (
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/petstore-go/petstore/httpapi"
	"github.com/petstore-go/petstore/internal/wire"
)

// listQuery is the query of GET /pets: the page size, the status filter and
// the ID that the cursor stands for.
type listQuery struct {
	limit  int
	status Status
	after  int64
}

// listParams are the parameters of GET /pets, in the order in which their
// problems are reported.
var listParams = [...]string{"limit", "status", "cursor"}

// parseListQuery parses the query of GET /pets. Parameters other than limit,
// status and cursor are ignored; each of those may be given at most once.
// The error reports the problem with each parameter that has one (the
// first, when it has several), in the order of listParams.
func parseListQuery(raw string) (listQuery, error) {
	q := listQuery{limit: DefaultPageSize}
	var seen [len(listParams)]bool
	var problems [len(listParams)]string
	problem := func(i int, detail string) {
		if problems[i] == "" {
			problems[i] = detail
		}
	}
	for raw != "" {
		var param string
		param, raw, _ = strings.Cut(raw, "&")
		key, value, _ := strings.Cut(param, "=")
		key, err := unescapeQuery(key)
		if err != nil {
			continue // not one of ours
		}
		i := slices.Index(listParams[:], key)
		if i < 0 {
			continue
		}
		if seen[i] {
			problem(i, key+" is given more than once; give it once")
			continue
		}
		seen[i] = true
		if value, err = unescapeQuery(value); err != nil {
			problem(i, key+" is not validly percent-encoded")
			continue
		}
		switch key {
		case "limit":
			n, ok := parseDigits(value)
			if !ok || n < 1 || n > MaxPageSize {
				problem(i, msgQueryLimit)
			}
			q.limit = int(n)
		case "status":
			q.status = Status(value)
			if !q.status.Valid() {
				problem(i, msgQueryStatus)
			}
		case "cursor":
			after, ok := parseCursor(value)
			if !ok {
				problem(i, "cursor is not valid; follow the Link header of the previous page")
			}
			q.after = after
		}
	}
	var fields []httpapi.FieldError
	for i, detail := range problems {
		if detail != "" {
			fields = append(fields, httpapi.FieldError{Parameter: listParams[i], Detail: detail})
		}
	}
	if fields != nil {
		return q, &requestError{code: httpapi.CodeInvalidParameter, message: joinDetails(fields), fields: fields}
	}
	return q, nil
}

// unescapeQuery decodes a query key or value, allocating only when it holds
// an escape.
func unescapeQuery(s string) (string, error) {
	if strings.IndexByte(s, '%') >= 0 || strings.IndexByte(s, '+') >= 0 {
		return url.QueryUnescape(s)
	}
	return s, nil
}

// parseDigits parses a non-empty string of ASCII digits, without sign.
func parseDigits(s string) (int64, bool) {
	if s == "" || len(s) > 18 {
		return 0, false
	}
	var n int64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// parseCursor accepts exactly the cursors that wire.AppendCursor makes for a
// positive ID.
func parseCursor(s string) (int64, bool) {
	if s == "" || len(s) > 13 || s[0] == '0' {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'z') {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 36, 64)
	return n, err == nil && n > 0
}

// appendLink appends the value of the Link header that points to the page
// that q selects, as a reference relative to the request's URL.
func (q listQuery) appendLink(dst []byte) []byte {
	dst = append(dst, "<?limit="...)
	dst = strconv.AppendInt(dst, int64(q.limit), 10)
	if q.status != "" {
		dst = append(dst, "&status="...)
		dst = append(dst, q.status...)
	}
	dst = append(dst, "&cursor="...)
	dst = wire.AppendCursor(dst, q.after)
	return append(dst, `>; rel="next"`...)
}

// invalidParameter is the error for a malformed query or path parameter.
func invalidParameter(message string) error {
	return &requestError{code: httpapi.CodeInvalidParameter, message: message}
}

// parsePetID parses the petId path segment: a base-10 int64, with an
// optional minus sign and no plus sign. The error's text is meant for the
// client.
func parsePetID(raw string) (int64, error) {
	s := raw
	if strings.Contains(s, "%") {
		var err error
		if s, err = url.PathUnescape(s); err != nil {
			return 0, invalidParameter("petId is not validly percent-encoded")
		}
	}
	if s == "" || s[0] == '+' {
		return 0, invalidParameter("petId must be a base-10 integer")
	}
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, invalidParameter("petId must be a base-10 integer in the range of int64")
	}
	return id, nil
}
