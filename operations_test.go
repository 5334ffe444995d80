package petstore_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/memstore"
)

func TestCreatePet(t *testing.T) {
	tests := []struct {
		name        string
		contentType string
		body        string
		want        petstore.NewPet
		wantJSON    string // the response body, with id 5
	}{
		{"with status", "application/json", `{"name":"Bella","categoryId":3,"status":"pending"}`,
			petstore.NewPet{Name: "Bella", CategoryID: 3, Status: petstore.StatusPending},
			`{"id":5,"name":"Bella","categoryId":3,"status":"pending"}`},
		{"without status", "application/json", `{"name":"Bella","categoryId":3}`,
			petstore.NewPet{Name: "Bella", CategoryID: 3},
			`{"id":5,"name":"Bella","categoryId":3}`},
		{"charset parameter", "application/json; charset=utf-8", `{"categoryId":9223372036854775807,"name":"Ünïcødé 🐕"}`,
			petstore.NewPet{Name: "Ünïcødé 🐕", CategoryID: 9223372036854775807},
			`{"id":5,"name":"Ünïcødé 🐕","categoryId":9223372036854775807}`},
		{"media type in other case", "Application/JSON", ` { "name" : "A\"<b>\\" , "categoryId" : 1 } `,
			petstore.NewPet{Name: `A"<b>\`, CategoryID: 1},
			`{"id":5,"name":"A\"\u003cb\u003e\\","categoryId":1}`},
		{"escapes", "application/json", `{"name":"\u00e9\ud83d\udc15\/","categoryId":2,"status":"sold"}`,
			petstore.NewPet{Name: "é🐕/", CategoryID: 2, Status: petstore.StatusSold},
			`{"id":5,"name":"é🐕/","categoryId":2,"status":"sold"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := memstore.New()
			h := wireHandler(t, store)
			w := wireRequest{method: "POST", target: "/v1/pets", body: tt.body,
				header: http.Header{"Content-Type": {tt.contentType}}}.do(h)
			wireCheckCommon(t, w, http.StatusCreated, "")
			if got := w.Body.String(); got != tt.wantJSON {
				t.Errorf("body = %s, want %s", got, tt.wantJSON)
			}
			if got := w.Header().Get("Location"); got != "pets/5" {
				t.Errorf("Location = %q, want pets/5", got)
			}
			got, err := store.Get(context.Background(), 5)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(petstore.Pet{ID: 5, NewPet: tt.want}, got); diff != "" {
				t.Errorf("stored pet (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLocationResolvesToThePet(t *testing.T) {
	h := wireHandler(t, memstore.New())
	w := wireRequest{method: "POST", target: "/v1/pets", body: `{"name":"A","categoryId":1}`}.do(h)
	loc := wireResolve(t, "/v1/pets", w.Header().Get("Location"))
	got := wireRequest{method: "GET", target: loc}.do(h)
	if got.Code != 200 || got.Body.String() != w.Body.String() {
		t.Errorf("GET %s = %d %s, want 200 %s", loc, got.Code, got.Body, w.Body)
	}
}

// wireResolve resolves a relative reference from a header against the
// request target it came from.
func wireResolve(t *testing.T, base, ref string) string {
	t.Helper()
	b, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	r, err := url.Parse(ref)
	if err != nil {
		t.Fatalf("reference %q: %v", ref, err)
	}
	return b.ResolveReference(r).String()
}

func TestGetPet(t *testing.T) {
	h := wireHandler(t, memstore.New())
	for _, tt := range []struct{ target, want string }{
		{"/v1/pets/1", `{"id":1,"name":"Rex","categoryId":1,"status":"available"}`},
		{"/v1/pets/4", `{"id":4,"name":"Nemo","categoryId":4}`},
		{"/v1/pets/%34", `{"id":4,"name":"Nemo","categoryId":4}`},
	} {
		w := wireRequest{method: "GET", target: tt.target}.do(h)
		wireCheckCommon(t, w, 200, "")
		if got := w.Body.String(); got != tt.want {
			t.Errorf("GET %s = %s, want %s", tt.target, got, tt.want)
		}
	}
}

// TestGetPetIsDeprecated checks the deprecation headers on every answer of
// getPet, and that the successor link resolves to the list.
func TestGetPetIsDeprecated(t *testing.T) {
	want := map[string]string{
		"Deprecation": "@1767225600",
		"Sunset":      "Thu, 05 Dec 2030 00:00:00 GMT",
		"Link":        `<../pets>; rel="successor-version"`,
	}
	h := wireHandler(t, memstore.New())
	for _, target := range []string{"/v1/pets/1", "/v1/pets/99", "/v1/pets/x"} {
		w := wireRequest{method: "GET", target: target}.do(h)
		for k, v := range want {
			if got := w.Header().Get(k); got != v {
				t.Errorf("GET %s: %s = %q, want %q", target, k, got, v)
			}
		}
		if got := wireResolve(t, target, "../pets"); got != "/v1/pets" {
			t.Errorf("successor of %s resolves to %s, want /v1/pets", target, got)
		}
	}
	for _, target := range []string{"/v1/pets", "/v1/nothing"} {
		w := wireRequest{method: "GET", target: target}.do(h)
		if got := w.Header().Get("Deprecation"); got != "" {
			t.Errorf("GET %s has Deprecation %q; only getPet is deprecated", target, got)
		}
	}
}

func TestWithDeprecationOverridesDates(t *testing.T) {
	dep := defaultDeprecation.AddDate(1, 0, 0)
	sunset := defaultSunset.AddDate(1, 0, 0)
	h := wireHandler(t, memstore.New(), petstore.WithDeprecation(dep, sunset))
	w := wireRequest{method: "GET", target: "/v1/pets/1"}.do(h)
	if got, want := w.Header().Get("Deprecation"), "@"+strconv.FormatInt(dep.Unix(), 10); got != want {
		t.Errorf("Deprecation = %q, want %q", got, want)
	}
	if got, want := w.Header().Get("Sunset"), "Fri, 05 Dec 2031 00:00:00 GMT"; got != want {
		t.Errorf("Sunset = %q, want %q", got, want)
	}
}

func TestListPets(t *testing.T) {
	h := wireHandler(t, memstore.New())
	tests := []struct {
		target, want, link string
	}{
		{"/v1/pets", `[{"id":1,"name":"Rex","categoryId":1,"status":"available"},{"id":2,"name":"Tom","categoryId":2,"status":"pending"},{"id":3,"name":"Kit","categoryId":3,"status":"sold"},{"id":4,"name":"Nemo","categoryId":4}]`, ""},
		{"/v1/pets?limit=2", `[{"id":1,"name":"Rex","categoryId":1,"status":"available"},{"id":2,"name":"Tom","categoryId":2,"status":"pending"}]`, `<?limit=2&cursor=2>; rel="next"`},
		{"/v1/pets?limit=2&cursor=2", `[{"id":3,"name":"Kit","categoryId":3,"status":"sold"},{"id":4,"name":"Nemo","categoryId":4}]`, ""},
		{"/v1/pets?limit=4", `[{"id":1,"name":"Rex","categoryId":1,"status":"available"},{"id":2,"name":"Tom","categoryId":2,"status":"pending"},{"id":3,"name":"Kit","categoryId":3,"status":"sold"},{"id":4,"name":"Nemo","categoryId":4}]`, ""},
		{"/v1/pets?status=pending", `[{"id":2,"name":"Tom","categoryId":2,"status":"pending"}]`, ""},
		{"/v1/pets?status=sold&limit=1", `[{"id":3,"name":"Kit","categoryId":3,"status":"sold"}]`, ""},
		{"/v1/pets?cursor=4", `[]`, ""},
		{"/v1/pets?cursor=zzzzzz", `[]`, ""},
		{"/v1/pets?colour=red&limit=1&page=7", `[{"id":1,"name":"Rex","categoryId":1,"status":"available"}]`, `<?limit=1&cursor=1>; rel="next"`},
		{"/v1/pets?%6Cimit=1", `[{"id":1,"name":"Rex","categoryId":1,"status":"available"}]`, `<?limit=1&cursor=1>; rel="next"`},
		{"/v1/pets?limit=100", `[{"id":1,"name":"Rex","categoryId":1,"status":"available"},{"id":2,"name":"Tom","categoryId":2,"status":"pending"},{"id":3,"name":"Kit","categoryId":3,"status":"sold"},{"id":4,"name":"Nemo","categoryId":4}]`, ""},
	}
	for _, tt := range tests {
		w := wireRequest{method: "GET", target: tt.target}.do(h)
		wireCheckCommon(t, w, 200, "")
		if got := w.Body.String(); got != tt.want {
			t.Errorf("GET %s = %s\nwant %s", tt.target, got, tt.want)
		}
		if got := w.Header().Get("Link"); got != tt.link {
			t.Errorf("GET %s: Link = %q, want %q", tt.target, got, tt.link)
		}
	}
}

func TestListPageSizeDefaultsTo20(t *testing.T) {
	store := memstore.New()
	h := wireHandler(t, store)
	for i := 0; i < 30; i++ {
		if _, _, err := store.Add(context.Background(), petstore.NewPet{Name: "P", CategoryID: 1}, petstore.AddOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	w := wireRequest{method: "GET", target: "/v1/pets"}.do(h)
	var pets []petstore.Pet
	if err := json.Unmarshal(w.Body.Bytes(), &pets); err != nil {
		t.Fatal(err)
	}
	if len(pets) != petstore.DefaultPageSize || pets[19].ID != 20 {
		t.Errorf("got %d pets ending with ID %d, want 20 ending with 20", len(pets), pets[len(pets)-1].ID)
	}
	if got, want := w.Header().Get("Link"), `<?limit=20&cursor=k>; rel="next"`; got != want {
		t.Errorf("Link = %q, want %q", got, want)
	}
}

// wireLink matches the target of a rel="next" Link header value.
func wireNext(t *testing.T, link string) string {
	t.Helper()
	ref, ok := strings.CutPrefix(link, "<")
	ref, rel, ok2 := strings.Cut(ref, ">")
	if !ok || !ok2 || rel != `; rel="next"` {
		t.Fatalf("Link %q is not a single rel=next link", link)
	}
	return ref
}

// TestPaginationVisitsEveryPetOnce follows Link headers from the first page,
// adding pets between pages, and checks that every pet that exists when
// its page is read is seen exactly once and in order.
func TestPaginationVisitsEveryPetOnce(t *testing.T) {
	for _, status := range []petstore.Status{"", petstore.StatusAvailable} {
		t.Run("status="+string(status), func(t *testing.T) {
			store := memstore.New()
			h := wireHandler(t, store)
			statuses := []petstore.Status{petstore.StatusAvailable, petstore.StatusPending, "", petstore.StatusSold}
			var last int64 // the ID of the pet added last
			add := func(i int) {
				p, _, err := store.Add(context.Background(), petstore.NewPet{Name: fmt.Sprint("pet", i), CategoryID: 1, Status: statuses[i%4]}, petstore.AddOptions{})
				if err != nil {
					t.Fatal(err)
				}
				last = p.ID
			}
			for i := 0; i < 25; i++ {
				add(i)
			}
			target := "/v1/pets?limit=3"
			if status != "" {
				target += "&status=" + string(status)
			}
			var seen []int64
			for pages := 0; target != ""; pages++ {
				if pages > 100 {
					t.Fatal("more than 100 pages: the links loop")
				}
				w := wireRequest{method: "GET", target: target}.do(h)
				if w.Code != 200 {
					t.Fatalf("GET %s = %d %s", target, w.Code, w.Body)
				}
				var page []petstore.Pet
				if err := json.Unmarshal(w.Body.Bytes(), &page); err != nil {
					t.Fatal(err)
				}
				for _, p := range page {
					seen = append(seen, p.ID)
				}
				add(100 + pages) // a pet added between pages
				link := w.Header().Get("Link")
				if link == "" {
					break
				}
				target = wireResolve(t, target, wireNext(t, link))
			}
			all, err := store.List(context.Background(), petstore.ListOptions{Status: status})
			if err != nil {
				t.Fatal(err)
			}
			var want []int64
			for _, p := range all {
				if p.ID != last { // added after the last page was read
					want = append(want, p.ID)
				}
			}
			if diff := cmp.Diff(want, seen); diff != "" {
				t.Errorf("IDs seen by following Link (-want +got):\n%s", diff)
			}
		})
	}
}

func TestHeadAnswersAsGetWithoutBody(t *testing.T) {
	h := wireHandler(t, memstore.New())
	for _, target := range []string{"/v1/pets?limit=1", "/v1/pets/1", "/v1/pets/99", "/v1/pets?limit=0"} {
		get := wireRequest{method: "GET", target: target}.do(h)
		head := wireRequest{method: "HEAD", target: target}.do(h)
		if head.Code != get.Code {
			t.Errorf("HEAD %s = %d, GET = %d", target, head.Code, get.Code)
		}
		if head.Body.Len() != 0 {
			t.Errorf("HEAD %s has a body: %s", target, head.Body)
		}
		if diff := cmp.Diff(get.Header(), head.Header()); diff != "" {
			t.Errorf("HEAD %s headers differ from GET (-get +head):\n%s", target, diff)
		}
	}
}

// wireStore is a Store whose every method fails with err, or panics when
// err is nil.
type wireStore struct {
	err   error
	calls int
}

func (s *wireStore) fail() error {
	s.calls++
	if s.err == nil {
		panic("store exploded: detail that must not reach the client")
	}
	return s.err
}
func (s *wireStore) Add(context.Context, petstore.NewPet, petstore.AddOptions) (petstore.Pet, bool, error) {
	return petstore.Pet{}, false, s.fail()
}
func (s *wireStore) Get(context.Context, int64) (petstore.Pet, error) {
	return petstore.Pet{}, s.fail()
}
func (s *wireStore) List(context.Context, petstore.ListOptions) ([]petstore.Pet, error) {
	return nil, s.fail()
}

func TestStoreFailures(t *testing.T) {
	requests := []wireRequest{
		{method: "GET", target: "/v1/pets"},
		{method: "POST", target: "/v1/pets", body: `{"name":"A","categoryId":1}`},
		{method: "GET", target: "/v1/pets/1"},
	}
	tests := []struct {
		name   string
		err    error
		status int
		code   string
		retry  string
	}{
		{"unavailable", fmt.Errorf("db: %w", petstore.ErrUnavailable), 503, "unavailable", "1"},
		{"deadline", context.DeadlineExceeded, 503, "unavailable", "1"},
		{"other error", errors.New("disk on fire at /var/lib/secret"), 500, "internal", ""},
		{"not found from List or Add", petstore.ErrNotFound, 500, "internal", ""},
		{"panic", nil, 500, "internal", ""},
	}
	for _, tt := range tests {
		for _, q := range requests {
			if tt.name == "not found from List or Add" && q.target == "/v1/pets/1" {
				continue // getPet answers 404 for it, as TestWireErrors shows
			}
			t.Run(tt.name+"/"+q.method+" "+q.target, func(t *testing.T) {
				store := &wireStore{err: tt.err}
				h, err := petstore.New(petstore.WithStore(store), petstore.WithAuthenticator(petstore.APIKeys(wireKey)))
				if err != nil {
					t.Fatal(err)
				}
				w := q.do(h)
				wireCheckCommon(t, w, tt.status, "")
				var body map[string]any
				if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
					t.Fatal(err)
				}
				if body["code"] != tt.code {
					t.Errorf("code = %v, want %s", body["code"], tt.code)
				}
				if tt.status == 500 && body["message"] != "internal error" {
					t.Errorf("message = %q, want only %q", body["message"], "internal error")
				}
				if got := w.Header().Get("Retry-After"); got != tt.retry {
					t.Errorf("Retry-After = %q, want %q", got, tt.retry)
				}
				if store.calls != 1 {
					t.Errorf("store called %d times, want 1", store.calls)
				}
			})
		}
	}
}

// TestGoneClientDoesNotReachStore checks that a request whose context is
// already done is answered without calling the store.
func TestGoneClientDoesNotReachStore(t *testing.T) {
	for _, q := range []wireRequest{
		{method: "GET", target: "/v1/pets"},
		{method: "POST", target: "/v1/pets", body: `{"name":"A","categoryId":1}`},
		{method: "GET", target: "/v1/pets/1"},
	} {
		store := &wireStore{err: errors.New("must not be called")}
		h, err := petstore.New(petstore.WithStore(store), petstore.WithAuthenticator(petstore.APIKeys(wireKey)))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		r, _ := http.NewRequestWithContext(ctx, q.method, q.target, strings.NewReader(q.body))
		r.Header.Set("Authorization", "Bearer "+wireKey)
		r.Header.Set("Content-Type", "application/json")
		w := wireRecorder()
		h.ServeHTTP(w, r)
		if store.calls != 0 {
			t.Errorf("%s %s: store called %d times after the client went away", q.method, q.target, store.calls)
		}
		if w.Code != 503 {
			t.Errorf("%s %s: status %d, want 503", q.method, q.target, w.Code)
		}
	}
}
