package petstore_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/internal/testkit/faultstore"
	"github.com/petstore-go/petstore/memstore"
)

// TestGetPetIsDeprecated checks the deprecation headers on every answer of
// getPet, and that the successor link resolves to the list.
func TestGetPetIsDeprecated(t *testing.T) {
	want := map[string]string{
		"Deprecation": "@1767225600",
		"Sunset":      "Thu, 05 Dec 2030 00:00:00 GMT",
		"Link":        `<../pets>; rel="successor-version"`,
	}
	env := newEnv(t)
	for _, target := range []string{"/v1/pets/1", "/v1/pets/99", "/v1/pets/x"} {
		w := env.serve(newRequest(t, "GET", target, "", nil))
		for k, v := range want {
			if got := w.Header().Get(k); got != v {
				t.Errorf("GET %s: %s = %q, want %q", target, k, got, v)
			}
		}
		if got := resolve(t, target, "../pets"); got != "/v1/pets" {
			t.Errorf("successor of %s resolves to %s, want /v1/pets", target, got)
		}
	}
	for _, target := range []string{"/v1/pets", "/v1/nothing"} {
		w := env.serve(newRequest(t, "GET", target, "", nil))
		if got := w.Header().Get("Deprecation"); got != "" {
			t.Errorf("GET %s has Deprecation %q; only getPet is deprecated", target, got)
		}
	}
}

func TestWithDeprecationOverridesDates(t *testing.T) {
	defaultDeprecation, defaultSunset := defaultDates()
	dep := defaultDeprecation.AddDate(1, 0, 0)
	sunset := defaultSunset.AddDate(1, 0, 0)
	env := newEnv(t, petstore.WithDeprecation(dep, sunset))
	w := env.serve(newRequest(t, "GET", "/v1/pets/1", "", nil))
	if got, want := w.Header().Get("Deprecation"), "@"+strconv.FormatInt(dep.Unix(), 10); got != want {
		t.Errorf("Deprecation = %q, want %q", got, want)
	}
	if got, want := w.Header().Get("Sunset"), "Fri, 05 Dec 2031 00:00:00 GMT"; got != want {
		t.Errorf("Sunset = %q, want %q", got, want)
	}
}

// TestPaginationVisitsEveryPetOnce follows Link headers from the first page,
// adding pets between pages, and checks that every pet that exists when
// its page is read is seen exactly once and in order.
func TestPaginationVisitsEveryPetOnce(t *testing.T) {
	for _, status := range []petstore.Status{"", petstore.StatusAvailable} {
		t.Run("status="+string(status), func(t *testing.T) {
			env := newEnv(t)
			statuses := []petstore.Status{petstore.StatusAvailable, petstore.StatusPending, "", petstore.StatusSold}
			var last int64 // the ID of the pet added last
			add := func(i int) {
				p, _, err := env.store.Add(context.Background(), petstore.NewPet{Name: fmt.Sprint("pet", i), CategoryID: 1, Status: statuses[i%4]}, petstore.AddOptions{})
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
				w := env.serve(newRequest(t, "GET", target, "", nil))
				if w.Code != 200 {
					t.Fatalf("GET %s = %d %s", target, w.Code, w.Body)
				}
				page := decode[[]petstore.Pet](t, w)
				for _, p := range page {
					seen = append(seen, p.ID)
				}
				add(100 + pages) // a pet added between pages
				link := w.Header().Get("Link")
				if link == "" {
					break
				}
				target = resolve(t, target, nextLink(t, link))
			}
			all, err := env.store.List(context.Background(), petstore.ListOptions{Status: status})
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
	env := newEnv(t)
	for _, target := range []string{"/v1/pets?limit=1", "/v1/pets/1", "/v1/pets/99", "/v1/pets?limit=0"} {
		get := env.serve(newRequest(t, "GET", target, "", nil))
		head := env.serve(newRequest(t, "HEAD", target, "", nil))
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

// TestStoreFailures checks the answer to each operation of a store that
// fails with each kind of error, or panics: the error's code, the default
// Retry-After of a 503, and a 500 that says only "internal error".
func TestStoreFailures(t *testing.T) {
	requests := []struct{ method, target, body string }{
		{"GET", "/v1/pets", ""},
		{"POST", "/v1/pets", `{"name":"A","categoryId":1}`},
		{"GET", "/v1/pets/1", ""},
	}
	tests := []struct {
		name   string
		fault  faultstore.Fault
		status int
		code   string
		retry  string
	}{
		{"unavailable", faultstore.Fault{Err: fmt.Errorf("db: %w", petstore.ErrUnavailable)}, 503, "unavailable", "1"},
		{"deadline", faultstore.Fault{Err: context.DeadlineExceeded}, 503, "unavailable", "1"},
		{"other error", faultstore.Fault{Err: errors.New("disk on fire at /var/lib/secret")}, 500, "internal", ""},
		{"not found from List or Add", faultstore.Fault{Err: petstore.ErrNotFound}, 500, "internal", ""},
		{"panic", faultstore.Fault{Panic: "store exploded: detail that must not reach the client"}, 500, "internal", ""},
	}
	for _, tt := range tests {
		for _, q := range requests {
			if tt.name == "not found from List or Add" && q.target == "/v1/pets/1" {
				continue // getPet answers 404 for it, as TestWire shows
			}
			t.Run(tt.name+"/"+q.method+" "+q.target, func(t *testing.T) {
				fs := faultstore.New(memstore.New())
				for _, m := range faultstore.Methods() {
					fs.Set(m, tt.fault)
				}
				w := serve(newHandler(t, fs), newRequest(t, q.method, q.target, q.body, nil))
				if code := checkResponse(t, w); w.Code != tt.status || string(code) != tt.code {
					t.Errorf("status %d %q, want %d %q", w.Code, code, tt.status, tt.code)
				}
				body := decode[map[string]any](t, w)
				if tt.status == 500 && body["message"] != "internal error" {
					t.Errorf("message = %q, want only %q", body["message"], "internal error")
				}
				if got := w.Header().Get("Retry-After"); got != tt.retry {
					t.Errorf("Retry-After = %q, want %q", got, tt.retry)
				}
				if got := fs.TotalCalls(); got != 1 {
					t.Errorf("store called %d times, want 1", got)
				}
			})
		}
	}
}
