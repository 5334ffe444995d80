package client

import (
	"net/http"
	"strconv"
	"strings"
	"sync"
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

// WithWaitForBudget makes the Client wait before a request that its
// budget would refuse, rather than after a 429: once an answer says that a
// budget holds no request (r=0 in its RateLimit field), the next request of
// that budget and API key waits the answer's reset (t) first, unless the
// call's context ends or the reset is longer than the longest wait of
// WithBackoff.
func WithWaitForBudget() Option {
	return option(false, func(c *Client) { c.empty = &emptyBudgets{until: map[budgetKey]time.Time{}} }, "")
}

// emptyBudgets holds, for WithWaitForBudget, the budgets that the latest
// answer found empty and until when: only those, so it holds no more
// entries than the callers that are out of budget at once.
type emptyBudgets struct {
	mu    sync.Mutex
	until map[budgetKey]time.Time
}

// A budgetKey names a budget by the API key that spends it and the method
// of its requests: on the library's handler, GET for reads and POST for
// creates.
type budgetKey struct{ apiKey, method string }

// note records what an answer to cl, arrived now, said of its budget b,
// if e and b are not nil.
func (e *emptyBudgets) note(cl *call, b *Budget) {
	if e == nil || b == nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	k := budgetKey{cl.key, cl.method}
	if b.Remaining > 0 || b.Reset <= 0 {
		delete(e.until, k)
		return
	}
	e.until[k] = time.Now().Add(b.Reset)
}

// waitForBudget returns cl's context's error if it is done, and otherwise
// waits, with WithWaitForBudget, until the budget of cl's request holds
// one, or until cl's context is done, unless that is longer than the
// longest wait between attempts.
func (c *Client) waitForBudget(cl *call) error {
	if err := cl.ctx.Err(); err != nil || c.empty == nil {
		return err
	}
	e, k := c.empty, budgetKey{cl.key, cl.method}
	e.mu.Lock()
	d := time.Until(e.until[k]) // far below 0 without an entry
	if d <= 0 {
		delete(e.until, k)
	}
	e.mu.Unlock()
	if d > 0 && d <= c.maxBackoff {
		return c.sleep(cl.ctx, d)
	}
	return nil
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
	for item := range strings.SplitSeq(strings.Join(h.Values("RateLimit-Policy"), ","), ",") {
		if n, p, ok := parseItem(item); ok && n == name {
			b.Quota, b.Window = int(p["q"]), time.Duration(p["w"])*time.Second
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
