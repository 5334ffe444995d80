package contracttest_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/internal/testkit/faultstore"
	"github.com/petstore-go/petstore/internal/wire"
	"github.com/petstore-go/petstore/memstore"
	"github.com/petstore-go/petstore/petstoretest"
)

// contractKey is the API key of the handlers under test.
const contractKey = "contract-key"

// contractHandler returns a handler on store accepting contractKey, with
// opts applied after those two, so that they may replace them.
func contractHandler(t *testing.T, store petstore.Store, opts ...petstore.Option) http.Handler {
	t.Helper()
	opts = append([]petstore.Option{petstore.WithStore(store), petstore.WithAuthenticator(petstore.APIKeys(contractKey))}, opts...)
	h, err := petstore.New(opts...)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// contractServer serves a handler on store with opts, as contractHandler
// makes it, and returns the server's URL.
func contractServer(t *testing.T, store petstore.Store, opts ...petstore.Option) string {
	t.Helper()
	srv := httptest.NewServer(contractHandler(t, store, opts...))
	t.Cleanup(srv.Close)
	return srv.URL
}

// contractAuthenticator answers every request with err.
func contractAuthenticator(err error) petstore.Authenticator {
	return petstore.AuthenticatorFunc(func(context.Context, petstore.Operation, string) (context.Context, error) {
		return nil, err
	})
}

// contractFailing returns a store whose every method meets fault.
func contractFailing(fault faultstore.Fault) petstore.Store {
	fs := faultstore.New(memstore.New())
	for _, m := range faultstore.Methods() {
		fs.Set(m, fault)
	}
	return fs
}

// contractRefuse is a petstore.Limiter that refuses every request, asking
// for a wait of 1.5 s.
type contractRefuse struct{}

func (contractRefuse) Allow(context.Context, string) (time.Duration, error) {
	return 1500 * time.Millisecond, nil
}

// A contractCase is one request and the status it must be answered with.
type contractCase struct {
	method, path string // the path under /v1
	want         int
}

// contractCasesFor are the requests that every failing configuration is
// tried with: each operation of wire.Routes, with 1 for each path
// parameter, and a HEAD for each GET.
func contractCasesFor(want int) []contractCase {
	var cases []contractCase
	for _, r := range wire.Routes() {
		path := contractParam.ReplaceAllString(r.Pattern, "1")
		cases = append(cases, contractCase{r.Method, path, want})
		if r.Method == http.MethodGet {
			cases = append(cases, contractCase{http.MethodHead, path, want})
		}
	}
	return cases
}

// contractParam matches a {name} segment of a route pattern.
var contractParam = regexp.MustCompile(`\{[^/]*\}`)

// contractFailures sends requests through client to handlers whose
// authenticator or store fails, which the shared table cannot express.
func contractFailures(t *testing.T, client *http.Client) {
	configs := []struct {
		name  string
		opts  []petstore.Option
		cases []contractCase
	}{
		{"authenticator forbids", []petstore.Option{petstore.WithAuthenticator(contractAuthenticator(petstore.ErrForbidden))},
			append(contractCasesFor(403), contractCase{"DELETE", "/pets", 403})},
		{"authenticator down", []petstore.Option{petstore.WithAuthenticator(contractAuthenticator(errors.New("key server unreachable")))},
			append(contractCasesFor(503), contractCase{"GET", "/orders", 503})},
		{"authenticator panics", []petstore.Option{petstore.WithAuthenticator(petstore.AuthenticatorFunc(
			func(context.Context, petstore.Operation, string) (context.Context, error) { panic("key server bug") }))},
			contractCasesFor(500)},
		{"over the budget", []petstore.Option{petstore.WithRateLimit(petstore.RateLimit{Reads: contractRefuse{}, Creates: contractRefuse{}})},
			contractCasesFor(429)},
		{"store unavailable", []petstore.Option{petstore.WithStore(contractFailing(faultstore.Fault{Err: petstore.ErrUnavailable}))},
			contractCasesFor(503)},
		{"store fails", []petstore.Option{petstore.WithStore(contractFailing(faultstore.Fault{Err: errors.New("disk on fire")}))},
			contractCasesFor(500)},
		{"store panics", []petstore.Option{petstore.WithStore(contractFailing(faultstore.Fault{Panic: errors.New("nil map")}))},
			contractCasesFor(500)},
	}
	for _, c := range configs {
		t.Run(c.name, func(t *testing.T) {
			base := contractServer(t, memstore.New(), c.opts...) + petstore.DefaultBasePath
			for _, tt := range c.cases {
				body := ""
				if tt.method == http.MethodPost {
					body = `{"name":"Rex","categoryId":1}`
				}
				resp, err := contractDo(t.Context(), client, tt.method, base+tt.path, body)
				if err != nil {
					t.Errorf("%s %s: %v", tt.method, tt.path, err)
					continue
				}
				resp.Body.Close()
				if resp.StatusCode != tt.want {
					t.Errorf("%s %s answered %d, want %d", tt.method, tt.path, resp.StatusCode, tt.want)
				}
			}
		})
	}
}

// contractDo sends a request through c with the contract key, the body
// (as JSON, when it is not "") and the headers given as name and value
// pairs; a pair with the value "" removes the header.
func contractDo(ctx context.Context, c *http.Client, method, url, body string, header ...string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+contractKey)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		if header[i+1] == "" {
			req.Header.Del(header[i])
		} else {
			req.Header.Set(header[i], header[i+1])
		}
	}
	return c.Do(req)
}

// contractBlockingStore is a memstore whose first Add waits until release
// is closed, so that a second create with the same key meets the first
// still running.
type contractBlockingStore struct {
	*memstore.Store
	entered, release chan struct{}
	once             *sync.Once
}

var _ petstore.Store = contractBlockingStore{}

func (s contractBlockingStore) Add(ctx context.Context, p petstore.NewPet, opts petstore.AddOptions) (petstore.Pet, bool, error) {
	s.once.Do(func() {
		close(s.entered)
		<-s.release
	})
	return s.Store.Add(ctx, p, opts)
}

// contractIdempotency sends a create with an Idempotency-Key again while
// the first is still running (409), which the conformance suite, whose
// clauses replay a create and reuse a key (422), cannot make a server do.
func contractIdempotency(t *testing.T, client *http.Client) {
	post := func(base, key, body string) *http.Response {
		t.Helper()
		resp, err := contractDo(t.Context(), client, http.MethodPost, base+"/pets", body, "Idempotency-Key", key)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	const rex = `{"name":"Rex","categoryId":1}`
	store := contractBlockingStore{memstore.New(), make(chan struct{}), make(chan struct{}), new(sync.Once)}
	base := contractServer(t, store) + petstore.DefaultBasePath
	first := make(chan int)
	go func() { first <- post(base, "key-2", rex).StatusCode }()
	<-store.entered
	if resp := post(base, "key-2", rex); resp.StatusCode != http.StatusConflict || resp.Header.Get("Retry-After") == "" {
		t.Errorf("a retry while the first create runs answered %d with Retry-After %q, want 409 with one", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	close(store.release)
	if status := <-first; status != http.StatusCreated {
		t.Errorf("the first create answered %d, want 201", status)
	}
}

// TestContract runs the HTTP conformance suite, which holds the wire rules,
// and the failing configurations through a client that checks every
// exchange against the document the handler serves, then lists the
// documented outcomes that none exercised.
func TestContract(t *testing.T) {
	h, v := contractValidator(t, memstore.New())
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	base := srv.URL + petstore.DefaultBasePath
	client := &http.Client{Transport: v.Transport(http.DefaultTransport)}
	// The same requests from a client that prefers problem details.
	problems := &http.Client{Transport: preferProblems{v.Transport(http.DefaultTransport)}}
	ran := map[string]bool{}
	parts := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"conformance suite", func(t *testing.T) {
			petstoretest.TestServer(t, petstoretest.Endpoint{BaseURL: base, APIKey: contractKey, Client: client})
		}},
		{"failures", func(t *testing.T) { contractFailures(t, client) }},
		{"idempotency", func(t *testing.T) { contractIdempotency(t, client) }},
		{"conformance suite, problem+json", func(t *testing.T) {
			petstoretest.TestServer(t, petstoretest.Endpoint{BaseURL: base, APIKey: contractKey, Client: client,
				Accept: "application/problem+json, application/json;q=0.9"})
		}},
		{"failures, problem+json", func(t *testing.T) { contractFailures(t, problems) }},
		{"watch over its cap", func(t *testing.T) { contractWatchCap(t, client) }},
	}
	for _, part := range parts {
		t.Run(part.name, func(t *testing.T) {
			ran[part.name] = true
			part.run(t)
		})
	}
	if errs := v.Errors(); len(errs) > 0 {
		t.Errorf("%d exchanges broke the contract; the first: %v", len(errs), errs[0])
	}
	if len(ran) < len(parts) {
		t.Logf("only %d of the parts ran, so unexercised outcomes are not listed", len(ran))
		return
	}
	for _, o := range v.Missing() {
		t.Errorf("documented but never exercised: %v", o)
	}
	seen := v.Seen()
	total := 0
	for _, n := range seen {
		total += n
	}
	t.Logf("%d exchanges checked, %d outcomes seen: %v", total, len(seen), seen)
}

// preferProblems is a RoundTripper that asks for application/problem+json,
// as a client of RFC 9457 does.
type preferProblems struct{ next http.RoundTripper }

func (p preferProblems) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Accept", "application/problem+json, application/json;q=0.9")
	return p.next.RoundTrip(req)
}

// contractWatchCap opens the one watch stream that a caller may hold, with
// a client that does not check it (the validator reads a body to its end,
// which a stream has not), and sends a second watch through client, which
// is answered 429 with Retry-After.
func contractWatchCap(t *testing.T, client *http.Client) {
	base := contractServer(t, memstore.New(), petstore.WithWatch(petstore.Watch{MaxStreamsPerPrincipal: 1})) + petstore.DefaultBasePath
	watch := func(c *http.Client) *http.Response {
		resp, err := contractDo(t.Context(), c, http.MethodGet, base+"/pets", "", "Accept", "text/event-stream")
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	first := watch(http.DefaultClient)
	defer first.Body.Close()
	if first.StatusCode != http.StatusOK {
		t.Fatalf("the first watch: %d, want 200", first.StatusCode)
	}
	second := watch(client)
	second.Body.Close()
	if second.StatusCode != http.StatusTooManyRequests || second.Header.Get("Retry-After") == "" {
		t.Errorf("a second watch: %d with Retry-After %q, want 429 with one", second.StatusCode, second.Header.Get("Retry-After"))
	}
}
