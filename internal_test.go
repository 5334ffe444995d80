package petstore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/petstore-go/petstore/internal/wire"
)

// TestDeadlineCtx checks that storeCtx keeps the rules of
// context.Context: Err is nil until the context ends, then the reason for
// ever; Done closes when it ends; the parent's values pass through.
func TestDeadlineCtx(t *testing.T) {
	type key struct{}
	parent := context.WithValue(context.Background(), key{}, "v")
	for _, tc := range []struct {
		name        string
		d           time.Duration
		detached    bool
		parentEnded bool // the parent's deadline has passed
		waitDone    bool // ask for Done before the context ends, and wait on it
		release     bool
		want        error // nil: Err stays nil and Done open
	}{
		{name: "before the deadline", d: time.Hour},
		{name: "deadline passed, Err asked first", d: 0, want: context.DeadlineExceeded},
		{name: "deadline passes while waiting on Done", d: time.Millisecond, waitDone: true, want: context.DeadlineExceeded},
		{name: "parent ended, Done asked first", d: time.Hour, parentEnded: true, waitDone: true, want: context.DeadlineExceeded},
		{name: "parent ended, Err asked first", d: time.Hour, parentEnded: true, want: context.DeadlineExceeded},
		{name: "detached from an ended parent", d: time.Hour, detached: true, parentEnded: true, waitDone: true},
		{name: "released", d: time.Hour, waitDone: true, release: true, want: context.Canceled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, cancel := context.WithCancel(parent)
			if tc.parentEnded {
				p, cancel = context.WithTimeout(parent, -1)
			}
			defer cancel()
			c := withStoreDeadline(p, tc.d, tc.detached)
			defer c.release()
			var done <-chan struct{}
			if tc.waitDone {
				done = c.Done()
			}
			if tc.release {
				c.release()
			}
			if done != nil && tc.want != nil {
				<-done
			}
			if err := c.Err(); !errors.Is(err, tc.want) {
				t.Errorf("Err = %v, want %v", err, tc.want)
			}
			if c.Value(key{}) != "v" {
				t.Error("the parent's value does not pass through")
			}
			if tc.want != nil {
				<-c.Done() // closed already
				return
			}
			select {
			case <-c.Done():
				t.Error("Done is closed before the deadline")
			default:
			}
			if d, ok := c.Deadline(); !ok || time.Until(d) < 59*time.Minute {
				t.Errorf("Deadline = %v, %v; want the store's own", d, ok)
			}
		})
	}
	t.Run("kept after release", func(t *testing.T) {
		c := withStoreDeadline(parent, time.Hour, false)
		c.release()
		kept := context.WithoutCancel(c)
		if kept.Err() != nil || kept.Value(key{}) != "v" {
			t.Errorf("a context kept after the call: Err %v, value %v; want nil and the parent's", kept.Err(), kept.Value(key{}))
		}
	})
	t.Run("a child context follows it", func(t *testing.T) {
		c := withStoreDeadline(parent, time.Millisecond, false)
		defer c.release()
		child, cancel := context.WithCancel(c)
		defer cancel()
		<-child.Done()
		if err := child.Err(); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("child's Err = %v, want DeadlineExceeded", err)
		}
	})
	t.Run("concurrent use", func(t *testing.T) {
		c := withStoreDeadline(parent, time.Millisecond, false)
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				<-c.Done()
				if c.Err() == nil {
					t.Error("Err is nil after Done closed")
				}
			})
		}
		wg.Wait()
		c.release()
	})
}

// BenchmarkStoreContext measures what a store call's deadline costs, as a
// storeCtx and as context.WithTimeout, for a store that asks Err once, as
// memstore does.
func BenchmarkStoreContext(b *testing.B) {
	parent, cancel := context.WithCancel(context.Background())
	defer cancel()
	b.Run("impl=withStoreDeadline", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			c := withStoreDeadline(parent, 5*time.Second, false)
			_ = c.Err()
			c.release()
		}
	})
	b.Run("impl=context.WithTimeout", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			c, cancel := context.WithTimeout(parent, 5*time.Second)
			_ = c.Err()
			cancel()
		}
	})
}

// TestAllowOf checks how the Allow value of a pattern is derived from the
// route table: the methods of its routes in their order, each GET followed
// by HEAD, and "" for a pattern without routes.
func TestAllowOf(t *testing.T) {
	routes := []route{
		{method: http.MethodGet, pattern: "/a"},
		{method: http.MethodPost, pattern: "/a"},
		{method: http.MethodDelete, pattern: "/b"},
		{method: http.MethodPut, pattern: "/c"},
		{method: http.MethodGet, pattern: "/c"},
	}
	tests := []struct{ pattern, want string }{
		{"/a", "GET, HEAD, POST"},
		{"/b", "DELETE"},
		{"/c", "PUT, GET, HEAD"},
		{"/d", ""},
	}
	for _, tt := range tests {
		if got := allowOf(routes, tt.pattern); got != tt.want {
			t.Errorf("allowOf(%s) = %q, want %q", tt.pattern, got, tt.want)
		}
	}
}

// TestRouterNotFound checks that the message of a 404 names the API's
// resources, from the route table, and not the public ones.
func TestRouterNotFound(t *testing.T) {
	tests := []struct {
		routes []route
		want   string
	}{
		{[]route{{method: http.MethodGet, pattern: "/a"}}, "no such path; the API serves /v1/a"},
		{[]route{{method: http.MethodGet, pattern: "/a"}, {method: http.MethodPost, pattern: "/a"}, {method: http.MethodGet, pattern: "/a/{id}"}},
			"no such path; the API serves /v1/a and /v1/a/{id}"},
		{[]route{{method: http.MethodGet, pattern: "/a"}, {method: http.MethodGet, pattern: "/b"}, {method: http.MethodGet, pattern: "/c"}, {method: http.MethodGet, pattern: "/doc", public: true}},
			"no such path; the API serves /v1/a, /v1/b and /v1/c"},
	}
	for _, tt := range tests {
		if got := newRouter("/v1", tt.routes).notFound; got != tt.want {
			t.Errorf("notFound = %q, want %q", got, tt.want)
		}
	}
}

// TestRoutesAreTheTable checks that apiRoutes serves every row of
// wire.Routes, each with one of the Operations and a serve function, that
// wire.Allow agrees with the default handler's, and that a public route is
// no operation.
func TestRoutesAreTheTable(t *testing.T) {
	var want []wire.Route
	for _, r := range apiRoutes() {
		want = append(want, wire.Route{Method: r.method, Pattern: r.pattern, Operation: string(r.op), Deprecated: r.deprecated})
		if r.public || !slices.Contains([]Operation{OpListPets, OpCreatePet, OpGetPet}, r.op) || r.serve == nil {
			t.Errorf("API route %s %s: public %v, operation %q; an API route is authenticated, has an operation and serves it", r.method, r.pattern, r.public, r.op)
		}
	}
	if diff := cmp.Diff(want, wire.Routes()); diff != "" {
		t.Errorf("wire.Routes (-want +got):\n%s", diff)
	}
	c := defaultConfig()
	for _, p := range []string{"/pets", "/pets/{petId}", wire.OpenAPIPath, "/nowhere"} {
		if got, want := wire.Allow(p), allowOf(handlerRoutes(&c), p); got != want {
			t.Errorf("wire.Allow(%q) = %q, the default handler's %q", p, got, want)
		}
	}
	var err error
	c.docs, err = docsRoutes(fstest.MapFS{"index.html": {}, "page.js": {}})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range handlerRoutes(&c)[len(want):] {
		if !r.public || r.op != OpNone {
			t.Errorf("route %s %s: public %v, operation %q; a route beside the API is public with OpNone", r.method, r.pattern, r.public, r.op)
		}
	}
}

// encodePets are pets whose JSON the handler writes with appendPet: tricky
// names, every status, and statuses that a Store might return although the
// handler never stores them.
var encodePets = []Pet{
	{ID: 1, NewPet: NewPet{Name: "Rex", CategoryID: 1}},
	{ID: 2, NewPet: NewPet{Name: "Tom & Jerry <3", CategoryID: 2, Status: StatusAvailable}},
	{ID: 3, NewPet: NewPet{Name: `say "meow" \o/`, CategoryID: 3, Status: StatusPending}},
	{ID: 4, NewPet: NewPet{Name: "Мурка 🐈 café", CategoryID: 4, Status: StatusSold}},
	{ID: 5, NewPet: NewPet{Name: "line\u2028para\u2029end", CategoryID: 5}},
	{ID: 6, NewPet: NewPet{Name: "ctrl\x00\x01\x1f\n\r\t", CategoryID: 6}},
	{ID: 7, NewPet: NewPet{Name: "bad\xff\xfeutf8\xed\xa0\x80", CategoryID: 7}},
	{ID: 1<<63 - 1, NewPet: NewPet{Name: "", CategoryID: -1 << 63}},
	{ID: -5, NewPet: NewPet{Name: "negative", CategoryID: 0, Status: "weird \"status\" <x>"}},
	{ID: 8, NewPet: NewPet{Name: strings.Repeat("long name ", 30), CategoryID: 1, Status: "\xff"}},
}

// TestEncodeMatchesEncodingJSON checks that appendPet and appendPets write
// exactly what encoding/json.Marshal writes for the same values, and that
// it decodes back to them.
func TestEncodeMatchesEncodingJSON(t *testing.T) {
	for _, p := range encodePets {
		t.Run(strconv.FormatInt(p.ID, 10), func(t *testing.T) { encodeCheckPet(t, p) })
	}
	t.Run("page", func(t *testing.T) {
		for _, pets := range [][]Pet{nil, {}, encodePets[:1], encodePets} {
			got := appendPets([]byte("prefix:"), pets)
			want, err := json.Marshal(pets)
			if err != nil {
				t.Fatal(err)
			}
			if len(pets) == 0 {
				want = []byte("[]") // the handler writes an empty page as [], never null
			}
			if diff := cmp.Diff("prefix:"+string(want), string(got)); diff != "" {
				t.Errorf("appendPets(%d pets) (-encoding/json +appendPets):\n%s", len(pets), diff)
			}
		}
	})
}

// FuzzEncodePet checks, for any pet, that appendPet writes valid JSON that
// encoding/json decodes to the values it decodes its own encoding to (the
// pet itself when its strings are valid UTF-8), byte for byte the same as
// encoding/json except for the escapes of backspace and form feed.
func FuzzEncodePet(f *testing.F) {
	for _, p := range encodePets {
		f.Add(p.ID, p.Name, p.CategoryID, string(p.Status))
	}
	f.Fuzz(func(t *testing.T, id int64, name string, category int64, status string) {
		encodeCheckPet(t, Pet{ID: id, NewPet: NewPet{Name: name, CategoryID: category, Status: Status(status)}})
	})
}

// encodeCheckPet checks appendPet(p) against encoding/json.
func encodeCheckPet(t *testing.T, p Pet) {
	t.Helper()
	got := appendPet(nil, &p)
	if !json.Valid(got) {
		t.Fatalf("appendPet(%+v) = %s: not valid JSON", p, got)
	}
	want, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.ContainsAny(p.Name+string(p.Status), "\b\f") && !bytes.Equal(got, want) {
		t.Errorf("appendPet(%+v):\n got %s\nwant %s (encoding/json)", p, got, want)
	}
	var gotPet, wantPet Pet
	if err := json.Unmarshal(got, &gotPet); err != nil {
		t.Fatalf("decoding %s: %v", got, err)
	}
	if err := json.Unmarshal(want, &wantPet); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantPet, gotPet); diff != "" {
		t.Errorf("appendPet(%+v) decodes differently from encoding/json's encoding (-want +got):\n%s", p, diff)
	}
	if utf8.ValidString(p.Name) && utf8.ValidString(string(p.Status)) {
		if diff := cmp.Diff(p, gotPet); diff != "" {
			t.Errorf("appendPet(%+v) does not decode to the pet (-want +got):\n%s", p, diff)
		}
	}
}

// BenchmarkEncodePage encodes a page of 20 pets with appendPets into a
// reused buffer, as the handler does, beside encoding/json.Marshal of the
// same page: impl=appendPets must cost at most half of impl=encoding_json.
//
//	go test -run '^$' -bench EncodePage -benchmem -count 10 . | benchstat -col /impl -
func BenchmarkEncodePage(b *testing.B) {
	statuses := []Status{"", StatusAvailable, StatusPending, StatusSold}
	page := make([]Pet, 20)
	for i := range page {
		id := int64(12345 + i)
		page[i] = Pet{ID: id, NewPet: NewPet{Name: "pet " + strconv.FormatInt(id, 10), CategoryID: id%7 + 1, Status: statuses[i%4]}}
	}
	b.Run("impl=encoding_json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(page); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("impl=appendPets", func(b *testing.B) {
		b.ReportAllocs()
		buf := make([]byte, 0, 2048)
		for b.Loop() {
			buf = appendPets(buf[:0], page)
		}
	})
}
