package petstore_test

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/httpapi"
	"github.com/petstore-go/petstore/internal/testkit/faultstore"
	"github.com/petstore-go/petstore/internal/testkit/syncbuf"
	"github.com/petstore-go/petstore/memstore"
)

// The one way the tests of this package build a handler, send it requests
// and check its answers.

// testKey is the API key that newHandler's handler accepts. The saved
// inputs of FuzzAuthorization hold it too.
const testKey = "fuzz-key-0123456789"

// newHandler returns the handler on store, accepting testKey, with opts
// applied after those two, so that they may replace them.
func newHandler(tb testing.TB, store petstore.Store, opts ...petstore.Option) http.Handler {
	tb.Helper()
	opts = append([]petstore.Option{petstore.WithStore(store), petstore.WithAuthenticator(petstore.APIKeys(testKey))}, opts...)
	h, err := petstore.New(opts...)
	if err != nil {
		tb.Fatal(err)
	}
	return h
}

// seededStore returns a memstore holding "pet 1" to "pet 30", with IDs 1 to
// 30, in categories 1 to 5, their statuses cycling through available,
// pending, sold and none: more than a default page.
func seededStore(tb testing.TB) *memstore.Store {
	tb.Helper()
	store := memstore.New()
	statuses := append(petstore.Statuses(), "")
	for i := range 30 {
		mustAdd(tb, store, petstore.NewPet{Name: "pet " + strconv.Itoa(i+1), CategoryID: int64(i%5 + 1), Status: statuses[i%len(statuses)]})
	}
	return store
}

// mustAdd adds p to store, failing the test when it cannot.
func mustAdd(tb testing.TB, store petstore.Store, p petstore.NewPet) petstore.Pet {
	tb.Helper()
	pet, _, err := store.Add(context.Background(), p, petstore.AddOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	return pet
}

// testEnv is a handler on a memstore.
type testEnv struct {
	h     http.Handler
	store *memstore.Store
}

// newEnv returns newHandler's handler with opts on a seededStore.
func newEnv(tb testing.TB, opts ...petstore.Option) testEnv {
	tb.Helper()
	store := seededStore(tb)
	return testEnv{h: newHandler(tb, store, opts...), store: store}
}

// serve answers r and returns the recorded response.
func (e testEnv) serve(r *http.Request) *httptest.ResponseRecorder { return serve(e.h, r) }

// serve answers r with h and returns the recorded response.
func serve(h http.Handler, r *http.Request) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// newRequest returns a request as a server hands it to a handler, with
// Authorization: Bearer testKey and, when it has a body, Content-Type:
// application/json, unless header replaces them (a nil value removes one).
func newRequest(tb testing.TB, method, target, body string, header http.Header) *http.Request {
	tb.Helper()
	return newRequestContext(tb, context.Background(), method, target, body, header)
}

// newRequestContext is newRequest with ctx.
func newRequestContext(tb testing.TB, ctx context.Context, method, target, body string, header http.Header) *http.Request {
	tb.Helper()
	u, err := url.ParseRequestURI(target)
	if err != nil {
		tb.Fatalf("a server would reject the target %q before the handler: %v", target, err)
	}
	r, err := http.NewRequestWithContext(ctx, cmp.Or(method, http.MethodGet), "http://petstore.test/", strings.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	r.URL, r.RequestURI = u, target
	r.Header.Set("Authorization", "Bearer "+testKey)
	if body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		if v == nil {
			r.Header.Del(k)
		} else {
			r.Header[http.CanonicalHeaderKey(k)] = v
		}
	}
	return r
}

// checkResponse checks what every answer carries and returns the error
// body's code, or "" for a success: exactly one X-Content-Type-Options:
// nosniff, one Cache-Control: no-store unless it has an ETag, and, when it
// has a body, one Content-Type: application/json and a Content-Length that
// matches it; every body ends with a newline. An error's body is exactly
// {code, message, status, type, title} and perhaps errors, with a code that
// goes with the HTTP status, that status, that code's type and title, and a
// message.
// (petstoretest.TestServer checks the rest of the headers over a real
// connection.)
func checkResponse(tb testing.TB, w *httptest.ResponseRecorder) httpapi.Code {
	tb.Helper()
	want := map[string]string{"X-Content-Type-Options": "nosniff", "Cache-Control": "no-store", "Content-Type": "application/json",
		"Content-Length": strconv.Itoa(w.Body.Len())}
	if w.Header().Get("ETag") != "" {
		delete(want, "Cache-Control")
	}
	if w.Code == http.StatusNoContent || w.Code == http.StatusNotModified {
		want = map[string]string{"X-Content-Type-Options": "nosniff", "Content-Type": "", "Content-Length": ""}
	}
	for k, v := range want {
		if got := w.Header().Values(k); v == "" && len(got) > 0 || v != "" && !slices.Equal(got, []string{v}) {
			tb.Fatalf("status %d: header %s = %q, want %q", w.Code, k, got, v)
		}
	}
	if w.Body.Len() > 0 && !bytes.HasSuffix(w.Body.Bytes(), []byte("}\n")) && !bytes.HasSuffix(w.Body.Bytes(), []byte("]\n")) {
		tb.Fatalf("status %d: body %q does not end with a newline", w.Code, w.Body)
	}
	if w.Code < 400 {
		if w.Body.Len() > 0 && !json.Valid(w.Body.Bytes()) {
			tb.Fatalf("status %d with a body that is not JSON: %q", w.Code, w.Body)
		}
		return ""
	}
	var e httpapi.Error
	d := json.NewDecoder(bytes.NewReader(w.Body.Bytes()))
	d.DisallowUnknownFields()
	if err := d.Decode(&e); err != nil || e.Code.Status() != w.Code || e.Status != w.Code || e.Message == "" ||
		e.Type != e.Code.Type() || e.Title != e.Code.Title() ||
		w.Code == http.StatusInternalServerError && e.Code != httpapi.CodeInternal {
		tb.Fatalf("status %d: error body %s is not {code, message, status, type, title} with a code of that status: %v", w.Code, w.Body, err)
	}
	return e.Code
}

// decode returns w's body decoded as a T, failing the test when it is not.
func decode[T any](tb testing.TB, w *httptest.ResponseRecorder) T {
	tb.Helper()
	var v T
	if err := json.Unmarshal(w.Body.Bytes(), &v); err != nil {
		tb.Fatalf("status %d: body %q is not a %T: %v", w.Code, w.Body, v, err)
	}
	return v
}

// snapshot returns every pet in store, checking that Len agrees.
func snapshot(tb testing.TB, store *memstore.Store) []petstore.Pet {
	tb.Helper()
	pets, err := store.List(context.Background(), petstore.ListOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	if store.Len() != len(pets) {
		tb.Fatalf("store.Len() = %d, but List returned %d pets", store.Len(), len(pets))
	}
	return pets
}

// checkUnchanged fails unless store holds exactly the pets of before.
func checkUnchanged(tb testing.TB, store *memstore.Store, before []petstore.Pet) {
	tb.Helper()
	if diff := gocmp.Diff(before, snapshot(tb, store)); diff != "" {
		tb.Fatalf("store changed by a rejected request (-before +after):\n%s", diff)
	}
}

// marshal returns v as encoding/json's Encoder writes it, ending with a
// newline: the body that the handler answers with.
func marshal(tb testing.TB, v any) string {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b) + "\n"
}

// resolve resolves a relative reference from a header against the request
// target it came from.
func resolve(t *testing.T, base, ref string) string {
	t.Helper()
	u, err := url.Parse(base)
	if err == nil {
		u, err = u.Parse(ref)
	}
	if err != nil {
		t.Fatalf("reference %q from %s: %v", ref, base, err)
	}
	return u.String()
}

// logBuffer is a log destination that tests can read while the handler
// writes to it from any goroutine.
type logBuffer struct{ syncbuf.Buffer }

// records returns the log's JSON records.
func (l *logBuffer) records(t *testing.T) []map[string]any {
	t.Helper()
	var recs []map[string]any
	for line := range strings.Lines(l.String()) {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		recs = append(recs, rec)
	}
	return recs
}

// levels returns the level, message and operation of each record.
func (l *logBuffer) levels(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, rec := range l.records(t) {
		out = append(out, fmt.Sprint(rec["level"], " ", rec["msg"], " ", rec["operation"]))
	}
	return out
}

// statusList returns the statuses of petstore.Statuses as messages name
// them, `"available", "pending" or "sold"`, so that a test of a message
// that names them fails when it does not follow the constants.
func statusList() string {
	var quoted []string
	for _, st := range petstore.Statuses() {
		quoted = append(quoted, strconv.Quote(string(st)))
	}
	return strings.Join(quoted[:len(quoted)-1], ", ") + " or " + quoted[len(quoted)-1]
}

// The default dates of WithDeprecation, as its doc gives them.
func defaultDates() (deprecation, sunset time.Time) {
	return time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC), time.Date(2030, time.December, 5, 0, 0, 0, 0, time.UTC)
}

// newServer returns a server of h, closed when the test ends, after the
// cleanups that the test registers later, such as those ending its watches.
func newServer(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// heldStore is a memstore whose calls that hold selects say so on arrived,
// wait until release is closed, then send the state of their context on
// ctxErr, which holds one.
type heldStore struct {
	*memstore.Store
	hold             func(m faultstore.Method, id int64) bool // id is 0 but for Get
	arrived, release chan struct{}
	ctxErr           chan error
}

var _ petstore.Store = (*heldStore)(nil)

func newHeldStore(store *memstore.Store, hold func(m faultstore.Method, id int64) bool) *heldStore {
	return &heldStore{Store: store, hold: hold, arrived: make(chan struct{}), release: make(chan struct{}), ctxErr: make(chan error, 1)}
}

func (s *heldStore) wait(ctx context.Context, m faultstore.Method, id int64) {
	if s.hold(m, id) {
		s.arrived <- struct{}{}
		<-s.release
		select {
		case s.ctxErr <- ctx.Err():
		default:
		}
	}
}

func (s *heldStore) Add(ctx context.Context, p petstore.NewPet, opts petstore.AddOptions) (petstore.Pet, bool, error) {
	s.wait(ctx, faultstore.Add, 0)
	return s.Store.Add(ctx, p, opts)
}

func (s *heldStore) Get(ctx context.Context, id int64) (petstore.Pet, error) {
	s.wait(ctx, faultstore.Get, id)
	return s.Store.Get(ctx, id)
}
