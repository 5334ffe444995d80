package client

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// A Budget is what an answer said of the caller's budget of requests, in
// its RateLimit and RateLimit-Policy header fields (see
// petstore.WithRateLimit).
type Budget struct {
	// Policy is the budget's name: "reads" for listing and getting, and
	// "creates" for creating, on the library's handler.
	Policy string
	// Quota and Window are the policy's q and w: the requests the budget
	// holds when full, and the time an empty budget takes to fill. They
	// are 0 when the answer had no RateLimit-Policy of that name.
	Quota  int
	Window time.Duration
	// Remaining is the requests the budget holds now (r), and Reset the
	// time until it holds one more (t), rounded up to whole seconds.
	Remaining int
	Reset     time.Duration
}

// parseBudget returns the budget that the first item of h's RateLimit
// field describes, with the RateLimit-Policy item of the same name, or nil
// when h has no RateLimit field that the client understands.
func parseBudget(h http.Header) *Budget {
	name, params, ok := parseItem(h.Get("RateLimit"))
	r, okR := params["r"]
	t, okT := params["t"]
	if !ok || !okR || !okT {
		return nil
	}
	b := &Budget{Policy: name, Remaining: int(r), Reset: time.Duration(t) * time.Second}
	for _, item := range h.Values("RateLimit-Policy") {
		for item := range strings.SplitSeq(item, ",") {
			if n, p, ok := parseItem(item); ok && n == name {
				b.Quota, b.Window = int(p["q"]), time.Duration(p["w"])*time.Second
			}
		}
	}
	return b
}

// parseItem parses the first item of a structured field list whose items
// are a string with integer parameters, such as `"reads";r=12;t=1`. It
// keeps the parameters that are integers from 0 to 2³¹−1.
func parseItem(v string) (name string, params map[string]int64, ok bool) {
	item, _, _ := strings.Cut(v, ",")
	parts := strings.Split(strings.TrimSpace(item), ";")
	name, quoted := strings.CutPrefix(parts[0], `"`)
	if name, ok = strings.CutSuffix(name, `"`); !quoted || !ok || name == "" || strings.ContainsAny(name, `"\`) {
		return "", nil, false
	}
	params = map[string]int64{}
	for _, p := range parts[1:] {
		k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
		if n, err := strconv.ParseInt(v, 10, 32); err == nil && n >= 0 {
			params[k] = n
		}
	}
	return name, params, true
}
