// Package loadtest drives a running animal store API with many concurrent
// clients and then checks that the store kept exactly what it acknowledged:
// every pet whose create was answered 201 is listed exactly once and found
// by ID, with the fields it was created with, and nothing else is stored.
//
// TestStore makes the standard load on a Store. To drive another server,
// typical usage inside a test is:
//
//	srv := httptest.NewServer(handler) // a real server on loopback
//	defer srv.Close()
//	ctx, cancel := context.WithTimeout(context.Background(), loadtest.Bound(t))
//	defer cancel()
//	r := loadtest.Run(ctx, t, loadtest.Config{
//		BaseURL: srv.URL + "/v1", APIKey: key,
//		Clients: 64, Creates: loadtest.Creates(t),
//	})
//	t.Logf("%v", r)
//
// The store must be empty when Run starts, and no one else may write to it
// while Run is running.
package loadtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petstore-go/petstore"
)

// The numbers of creates that Creates returns when PETSTORE_LOAD_CREATES is
// not set. The race detector makes every request several times as costly,
// so a test binary built with -race makes fewer; set PETSTORE_LOAD_CREATES
// to make the full number under it.
const (
	DefaultCreates     = 100_000
	DefaultRaceCreates = 20_000
)

// EnvCreates is the environment variable that sets the number of creates.
const EnvCreates = "PETSTORE_LOAD_CREATES"

// Creates returns the number of creates a load test makes: the value of
// PETSTORE_LOAD_CREATES when it is set, otherwise DefaultCreates, or
// DefaultRaceCreates when the race detector is on. A value that is not a
// positive integer fails the test.
func Creates(t testing.TB) int {
	t.Helper()
	v := os.Getenv(EnvCreates)
	if v == "" {
		if info, ok := debug.ReadBuildInfo(); ok && slices.Contains(info.Settings, debug.BuildSetting{Key: "-race", Value: "true"}) {
			t.Logf("the race detector is on, so the load is %d creates rather than %d; set %s to change it",
				DefaultRaceCreates, DefaultCreates, EnvCreates)
			return DefaultRaceCreates
		}
		return DefaultCreates
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("%s=%q: want a positive integer", EnvCreates, v)
	}
	return n
}

// Bound returns how long a load test may run: 10 minutes, or less when the
// test binary's -timeout ends sooner, so that an overrun fails with the
// counts reached rather than with the test binary's panic.
func Bound(t *testing.T) time.Duration {
	bound := 10 * time.Minute
	if deadline, ok := t.Deadline(); ok {
		bound = min(bound, time.Until(deadline)*9/10)
	}
	return bound
}

// Config describes a load run.
type Config struct {
	// BaseURL is the API's base URL, such as "http://127.0.0.1:8080/v1";
	// the collection is BaseURL + "/pets".
	BaseURL string
	// APIKey is sent as the bearer token of every request.
	APIKey string
	// Clients is the number of concurrent clients.
	Clients int
	// Creates is the total number of creates, shared among the clients.
	// After every fifth create, a client also lists a page and gets one of
	// the pets it created.
	Creates int
	// Settle is how long Run waits between the load and the verification:
	// for a store whose readers may lag behind its writers by at most a
	// stated bound, the bound. The default, 0, verifies at once.
	Settle time.Duration
}

// Result counts what a run did.
type Result struct {
	// Requests is the number of HTTP requests tried, during the load and
	// during the verification.
	Requests int64
	// Creates, Lists and Gets are the requests of the load phase.
	Creates, Lists, Gets int64
	// Created is the number of creates answered 201.
	Created int
	// Verified is the number of created pets found afterwards exactly once
	// in the full listing, under their status, and by ID, each time with
	// the fields they were created with.
	Verified int
	// Load is how long the load phase took; Verify how long the checks
	// after it took.
	Load, Verify time.Duration
}

// String formats r for a test log.
func (r Result) String() string {
	return fmt.Sprintf("%d requests tried (load: %d creates, %d lists, %d gets), %d pets created, %d verified; load %v (%.0f requests/s), verification %v",
		r.Requests, r.Creates, r.Lists, r.Gets, r.Created, r.Verified,
		r.Load.Round(time.Millisecond), float64(r.Creates+r.Lists+r.Gets)/r.Load.Seconds(), r.Verify.Round(time.Millisecond))
}

// Run makes the load that c describes, then verifies the store through the
// API. It reports every discrepancy with t.Errorf and stops the test with
// t.Fatalf when requests fail or ctx is done before the end.
func Run(ctx context.Context, t testing.TB, c Config) Result {
	t.Helper()
	cl := &client{
		base: c.BaseURL + "/pets",
		auth: "Bearer " + c.APIKey,
		http: &http.Client{
			Transport: &http.Transport{MaxIdleConnsPerHost: c.Clients, IdleConnTimeout: time.Minute},
			Timeout:   time.Minute,
		},
	}
	defer cl.http.CloseIdleConnections()

	start := time.Now()
	created := cl.load(ctx, t, c)
	r := Result{Load: time.Since(start), Creates: cl.creates.Load(), Lists: cl.lists.Load(), Gets: cl.gets.Load(), Created: len(created)}

	select {
	case <-time.After(c.Settle):
	case <-ctx.Done():
	}
	start = time.Now()
	r.Verified = cl.verify(ctx, t, c.Clients, created)
	r.Verify = time.Since(start)
	r.Requests = cl.creates.Load() + cl.lists.Load() + cl.gets.Load()
	return r
}

// load runs the clients and returns the pets acknowledged with 201, by ID.
func (cl *client) load(ctx context.Context, t testing.TB, c Config) map[int64]petstore.NewPet {
	t.Helper()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	acked := make([][]petstore.Pet, c.Clients)
	var wg sync.WaitGroup
	for i := range c.Clients {
		n := c.Creates / c.Clients
		if i < c.Creates%c.Clients {
			n++
		}
		wg.Go(func() {
			pets, err := cl.work(ctx, i, n)
			acked[i] = pets
			if err != nil {
				cancel(fmt.Errorf("client %d, after %d of its %d creates: %w", i, len(pets), n, err))
			}
		})
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("loadtest: the load did not finish in time: %d of %d creates were made; lower %s or raise the bound",
				cl.creates.Load(), c.Creates, EnvCreates)
		}
		t.Fatalf("loadtest: %v", err)
	}
	byID := make(map[int64]petstore.NewPet, c.Creates)
	for _, pets := range acked {
		for _, p := range pets {
			if _, dup := byID[p.ID]; dup {
				t.Errorf("loadtest: two creates were acknowledged with ID %d", p.ID)
			}
			byID[p.ID] = p.NewPet
		}
	}
	return byID
}

// statuses are given to new pets in turn: none, then each of
// petstore.Statuses.
var statuses = append([]petstore.Status{""}, petstore.Statuses()...)

// work is client i: it makes n creates and, after every fifth, lists the
// next page of its walk through the collection and gets one of its pets.
// It returns the pets acknowledged, and the first failure.
func (cl *client) work(ctx context.Context, i, n int) ([]petstore.Pet, error) {
	mine := make([]petstore.Pet, 0, n)
	w := walk{status: statuses[i%len(statuses)], limit: 1 + i%petstore.MaxPageSize}
	for seq := range n {
		// A name unique to the create, with characters outside ASCII.
		got, err := cl.create(ctx, petstore.NewPet{
			Name:       fmt.Sprintf("Client %d pet %d: Ünïcödé 猫 🐈", i, seq),
			CategoryID: int64(i)*1_000_000 + int64(seq) + 1,
			Status:     statuses[(i+seq)%len(statuses)],
		})
		if err != nil {
			return mine, err
		}
		mine = append(mine, got)
		if seq%5 != 4 {
			continue
		}
		if err := cl.step(ctx, &w); err != nil {
			return mine, err
		}
		p := mine[(seq*7919)%len(mine)]
		got, err = cl.get(ctx, p.ID)
		if err != nil {
			return mine, err
		}
		if got != p {
			return mine, fmt.Errorf("GET pets/%d answered %+v; it was created as %+v", p.ID, got, p)
		}
	}
	return mine, nil
}

// A walk is a client's progress through the collection during the load,
// one page per step, restarting at the first page after the last.
type walk struct {
	status petstore.Status
	limit  int
	next   string // the next page's URL; "" for the first
	last   int64  // the last ID of the walk so far
}

// step lists the next page of w and checks it: at most limit pets, each
// with the status asked for, IDs ascending across the pages of the walk.
func (cl *client) step(ctx context.Context, w *walk) error {
	if w.next == "" {
		w.next = cl.base + "?limit=" + strconv.Itoa(w.limit)
		if w.status != "" {
			w.next += "&status=" + string(w.status)
		}
		w.last = 0
	}
	page, next, err := cl.list(ctx, w.next)
	if err != nil {
		return err
	}
	if len(page) > w.limit {
		return fmt.Errorf("GET %s answered %d pets; the limit is %d", w.next, len(page), w.limit)
	}
	for _, p := range page {
		if p.ID <= w.last {
			return fmt.Errorf("GET %s listed pet %d after pet %d: IDs must ascend across pages", w.next, p.ID, w.last)
		}
		if w.status != "" && p.Status != w.status {
			return fmt.Errorf("GET %s listed pet %d with status %q", w.next, p.ID, p.Status)
		}
		w.last = p.ID
	}
	w.next = next
	return nil
}

// TestStore makes the standard load on store, which must be empty: the
// handler on store, served by a real server on loopback, gets 64 clients
// making Creates(t) creates within Bound(t). It then checks that every
// create was acknowledged and verified, and logs the counts after name.
func TestStore(t *testing.T, name string, store petstore.Store) {
	t.Helper()
	const key = "load-key"
	h, err := petstore.New(petstore.WithStore(store), petstore.WithAuthenticator(petstore.APIKeys(key)))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()

	bound := Bound(t)
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	c := Config{
		BaseURL: srv.URL + petstore.DefaultBasePath,
		APIKey:  key,
		Clients: 64,
		Creates: Creates(t),
	}
	r := Run(ctx, t, c)
	t.Logf("%s, %d clients, bound %v: %v", name, c.Clients, bound.Round(1e9), r)
	if r.Created != c.Creates || r.Verified != c.Creates {
		t.Errorf("%d creates: %d acknowledged, %d verified; want all of them", c.Creates, r.Created, r.Verified)
	}
}

// maxReports caps the discrepancies of each kind that verify reports.
const maxReports = 10

// verify checks the store against the pets acknowledged, by ID: the full
// listing, paged through its Link headers, holds exactly them, once each,
// as created; so does the listing under each status for the pets with that
// status; and each is found by ID as created. It returns the number of
// pets that passed every check.
func (cl *client) verify(ctx context.Context, t testing.TB, clients int, acked map[int64]petstore.NewPet) int {
	t.Helper()
	r := &reporter{t: t, counts: map[string]int{}, bad: map[int64]bool{}}
	for _, status := range statuses {
		target := cl.base + "?limit=" + fmt.Sprint(petstore.MaxPageSize)
		where := "the full listing"
		if status != "" {
			target += "&status=" + string(status)
			where = "the listing under its status"
		}
		var last int64
		seen := make(map[int64]bool)
		for target != "" {
			var page []petstore.Pet
			var err error
			page, target, err = cl.list(ctx, target)
			if err != nil {
				t.Fatalf("loadtest: %v", verifyError(ctx, err))
			}
			for _, got := range page {
				if got.ID <= last {
					r.report(0, "order", "listing with status %q: pet %d follows pet %d", status, got.ID, last)
				}
				last = got.ID
				want, ok := acked[got.ID]
				switch {
				case !ok:
					r.report(0, "unacknowledged", "listing with status %q holds pet %+v, whose create was not acknowledged", status, got)
				case want != got.NewPet:
					r.report(got.ID, "fields", "listing with status %q holds pet %d as %+v; it was created as %+v", status, got.ID, got.NewPet, want)
				case status != "" && got.Status != status:
					r.report(got.ID, "filter", "listing with status %q holds pet %+v", status, got)
				case seen[got.ID]:
					r.report(got.ID, "duplicate", "listing with status %q holds pet %d more than once", status, got.ID)
				}
				seen[got.ID] = true
			}
		}
		for id, p := range acked {
			if !seen[id] && (status == "" || p.Status == status) {
				r.report(id, "missing from "+where, "pet %d, acknowledged as %+v, is missing from %s", id, p, where)
			}
		}
	}

	ids := make(chan int64)
	var wg sync.WaitGroup
	var failed atomic.Bool
	for range clients {
		wg.Go(func() {
			for id := range ids {
				got, err := cl.get(ctx, id)
				switch {
				case err != nil:
					if !failed.Swap(true) {
						t.Errorf("loadtest: %v", verifyError(ctx, err))
					}
				case got.ID != id || got.NewPet != acked[id]:
					r.report(id, "get", "GET pets/%d answered %+v; it was created as %+v", id, got, acked[id])
				}
			}
		})
	}
	for id := range acked {
		if ctx.Err() != nil || failed.Load() {
			break
		}
		ids <- id
	}
	close(ids)
	wg.Wait()
	if failed.Load() {
		t.FailNow()
	}
	if err := ctx.Err(); err != nil {
		t.Fatalf("loadtest: %v", verifyError(ctx, err))
	}
	return len(acked) - len(r.bad)
}

// verifyError describes the failure of a request of the verification.
func verifyError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("the verification did not finish in time; lower %s or raise the bound: %w", EnvCreates, err)
	}
	return fmt.Errorf("verifying: %w", err)
}

// reporter reports discrepancies, at most maxReports of each kind, and
// counts the rest, and records the acknowledged pets that failed a check.
// It is safe for concurrent use.
type reporter struct {
	t      testing.TB
	mu     sync.Mutex
	counts map[string]int
	bad    map[int64]bool
}

// report reports a discrepancy of kind, in which the acknowledged pet with
// ID bad failed a check; 0 names none.
func (r *reporter) report(bad int64, kind, format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if bad != 0 {
		r.bad[bad] = true
	}
	r.counts[kind]++
	switch n := r.counts[kind]; {
	case n <= maxReports:
		r.t.Errorf("loadtest: "+format, args...)
	case n == maxReports+1:
		r.t.Errorf("loadtest: more %s discrepancies follow; only the first %d are reported", kind, maxReports)
	}
}

// client makes the API's requests and counts them. It is safe for
// concurrent use.
type client struct {
	base string // the collection's URL
	auth string // the Authorization header
	http *http.Client

	creates, lists, gets atomic.Int64 // every request tried, by kind
}

// call sends a request, with body as JSON when it is not nil, requires the
// status want and decodes the answer into v strictly: no unknown fields,
// no trailing data. It returns the answer's headers.
func (cl *client) call(ctx context.Context, method, target string, body []byte, want int, v any) (http.Header, error) {
	req, err := http.NewRequestWithContext(ctx, method, target, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", cl.auth)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := cl.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%s %s: reading the body: %w", method, target, err)
	}
	if resp.StatusCode != want {
		return nil, fmt.Errorf("%s %s answered %d: %s", method, target, resp.StatusCode, b)
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return nil, fmt.Errorf("%s %s: decoding %s: %w", method, target, b, err)
	}
	if d.More() {
		return nil, fmt.Errorf("%s %s: trailing data after the JSON value in %s", method, target, b)
	}
	return resp.Header, nil
}

// create posts p and returns the pet as the 201 answer describes it, after
// checking that it is p with a positive ID at the Location given.
func (cl *client) create(ctx context.Context, p petstore.NewPet) (petstore.Pet, error) {
	cl.creates.Add(1)
	body, _ := json.Marshal(p) // a NewPet always marshals
	var got petstore.Pet
	h, err := cl.call(ctx, http.MethodPost, cl.base, body, http.StatusCreated, &got)
	if err != nil {
		return got, err
	}
	if got.ID < 1 || got.NewPet != p {
		return got, fmt.Errorf("POST %s of %+v answered %+v", cl.base, p, got)
	}
	if loc, want := h.Get("Location"), "pets/"+strconv.FormatInt(got.ID, 10); loc != want {
		return got, fmt.Errorf("POST %s answered Location %q; want %q", cl.base, loc, want)
	}
	return got, nil
}

// get returns the pet with the given ID; any answer but 200 is an error.
func (cl *client) get(ctx context.Context, id int64) (petstore.Pet, error) {
	cl.gets.Add(1)
	var got petstore.Pet
	_, err := cl.call(ctx, http.MethodGet, cl.base+"/"+strconv.FormatInt(id, 10), nil, http.StatusOK, &got)
	return got, err
}

// list returns the pets of the page at target, and the URL of the next
// page from the Link header, or "" on the last page.
func (cl *client) list(ctx context.Context, target string) ([]petstore.Pet, string, error) {
	cl.lists.Add(1)
	var page []petstore.Pet
	h, err := cl.call(ctx, http.MethodGet, target, nil, http.StatusOK, &page)
	if err != nil {
		return nil, "", err
	}
	next, err := nextLink(target, h.Values("Link"))
	if err != nil {
		return nil, "", fmt.Errorf("GET %s: %w", target, err)
	}
	return page, next, nil
}

// nextLink returns the target of the rel="next" link among the Link header
// values, resolved against base, or "" when there is none.
func nextLink(base string, values []string) (string, error) {
	for _, v := range values {
		for link := range strings.SplitSeq(v, ",") {
			ref, params, ok := strings.Cut(strings.TrimSpace(link), ";")
			ref, ok1 := strings.CutPrefix(strings.TrimSpace(ref), "<")
			ref, ok2 := strings.CutSuffix(ref, ">")
			r, err := url.Parse(ref)
			if !ok || !ok1 || !ok2 || err != nil {
				return "", fmt.Errorf("malformed Link header %q", v)
			}
			if strings.TrimSpace(params) == `rel="next"` {
				b, _ := url.Parse(base) // just requested, so it parses
				return b.ResolveReference(r).String(), nil
			}
		}
	}
	return "", nil
}
