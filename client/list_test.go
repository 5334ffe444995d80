package client_test

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/client"
)

// addPets adds n pets to store, cycling through the statuses and none, and
// returns them.
func addPets(t testing.TB, store petstore.Store, n int) []petstore.Pet {
	t.Helper()
	statuses := []petstore.Status{"", petstore.StatusAvailable, petstore.StatusPending, petstore.StatusSold}
	pets := make([]petstore.Pet, n)
	for i := range pets {
		p, _, err := store.Add(t.Context(), petstore.NewPet{Name: fmt.Sprintf("pet %d", i), CategoryID: 1, Status: statuses[i%len(statuses)]}, petstore.AddOptions{})
		must(t, err)
		pets[i] = p
	}
	return pets
}

// collect reads the pets that c.All yields, failing the test on an error,
// and stops its loop after stop pets unless stop is 0.
func collect(t *testing.T, c *client.Client, opts petstore.ListOptions, stop int) []petstore.Pet {
	t.Helper()
	var pets []petstore.Pet
	for p, err := range c.All(t.Context(), opts) {
		if err != nil {
			t.Fatalf("All(%+v): %v", opts, err)
		}
		if pets = append(pets, p); len(pets) == stop {
			break
		}
	}
	return pets
}

// TestAllPages checks that All yields the pets that its options select,
// with one request per page.
func TestAllPages(t *testing.T) {
	srv, store := newMemServer(t)
	all := addPets(t, store, 250)
	sold := slices.DeleteFunc(slices.Clone(all), func(p petstore.Pet) bool { return p.Status != petstore.StatusSold })
	tests := []struct {
		name     string
		pageSize int
		opts     petstore.ListOptions
		want     []petstore.Pet
		requests int
		stop     int // the pets after which the loop stops, 0 for none
	}{
		{"every pet", 100, petstore.ListOptions{}, all, 3, 0},
		{"every pet, pages of 7", 7, petstore.ListOptions{}, all, 36, 0},
		{"pages that end with the last pet", 50, petstore.ListOptions{}, all, 5, 0},
		{"limit under a page", 100, petstore.ListOptions{Limit: 30}, all[:30], 1, 0},
		{"limit over a page", 100, petstore.ListOptions{Limit: 150}, all[:150], 2, 0},
		{"limit of whole pages", 10, petstore.ListOptions{Limit: 20}, all[:20], 2, 0},
		{"after", 100, petstore.ListOptions{After: all[199].ID}, all[200:], 1, 0},
		{"after every pet", 100, petstore.ListOptions{After: all[249].ID}, nil, 1, 0},
		{"after a negative ID", 100, petstore.ListOptions{After: -5}, all, 3, 0},
		{"status", 20, petstore.ListOptions{Status: petstore.StatusSold}, sold, 4, 0},
		{"a loop that stops within the first page", 10, petstore.ListOptions{}, all[:10], 1, 10},
		{"status, after and limit", 5, petstore.ListOptions{Status: petstore.StatusSold, After: all[100].ID, Limit: 12}, sold[25:37], 3, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newClient(t, srv.base, client.WithPageSize(tt.pageSize))
			before := srv.count(http.MethodGet)
			got := collect(t, c, tt.opts, tt.stop)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("All(%+v) (-want +got):\n%s", tt.opts, diff)
			}
			if n := srv.count(http.MethodGet) - before; n != tt.requests {
				t.Errorf("All(%+v) sent %d requests; want %d", tt.opts, n, tt.requests)
			}
			if tt.stop > 0 {
				return
			}
			listed, err := c.List(t.Context(), tt.opts)
			must(t, err)
			if diff := cmp.Diff(got, listed); diff != "" {
				t.Errorf("List(%+v), against All (-All +List):\n%s", tt.opts, diff)
			}
		})
	}
}

// TestAllWhileAdding checks that All visits every pet exactly once, in
// ascending order of ID, while other goroutines add pets.
func TestAllWhileAdding(t *testing.T) {
	srv, store := newMemServer(t)
	before := addPets(t, store, 300)
	c := newClient(t, srv.base, client.WithPageSize(7))

	const writers, perWriter = 4, 100
	var wg sync.WaitGroup
	start := make(chan struct{})
	for w := range writers {
		wg.Go(func() {
			<-start
			for i := range perWriter {
				if _, _, err := c.Add(t.Context(), petstore.NewPet{Name: fmt.Sprintf("writer %d pet %d", w, i), CategoryID: 2}, petstore.AddOptions{}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	close(start)
	visited := collect(t, c, petstore.ListOptions{}, 0)
	wg.Wait()

	final, err := store.List(t.Context(), petstore.ListOptions{})
	must(t, err)
	if len(final) != len(before)+writers*perWriter {
		t.Fatalf("the store holds %d pets; want %d", len(final), len(before)+writers*perWriter)
	}
	// The visited pets are the first ones of the store, each once: every
	// pet that existed when All started, and those added meanwhile up to
	// the last one All read.
	if diff := cmp.Diff(final[:len(visited)], visited); diff != "" {
		t.Errorf("the pets All visited, against the store's first ones (-store +visited):\n%s", diff)
	}
	if len(visited) < len(before) {
		t.Errorf("All visited %d pets; %d existed when it started", len(visited), len(before))
	}
	t.Logf("All visited %d pets; %d existed when it started, %d were added", len(visited), len(before), writers*perWriter)
	if got, want := srv.count(http.MethodGet), (len(visited)+6)/7; got != want {
		t.Errorf("All sent %d requests for %d pets in pages of 7; want %d", got, len(visited), want)
	}
}

// allIDs returns the IDs of the pets that All yields, and the last error it
// yields.
func allIDs(t *testing.T, base string) (ids []int64, last error) {
	for p, err := range newClient(t, base).All(t.Context(), petstore.ListOptions{}) {
		if err != nil {
			last = err
			continue
		}
		ids = append(ids, p.ID)
	}
	return ids, last
}

// TestAllLinks checks how All follows Link headers that a server other than
// petstore.New might send: only under the base URL, and never yielding a
// pet twice.
func TestAllLinks(t *testing.T) {
	t.Run("leaving the base URL", func(t *testing.T) {
		other := newKeyLog(t, false, "")
		// The same origin as the base URL: pages at /v1/pets, and a log of
		// every request elsewhere.
		same := newKeyLog(t, false, "")
		record := same.Config.Handler
		var next atomic.Value // the Link of the second page
		same.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch {
			case r.URL.Path != "/v1/pets":
				record.ServeHTTP(w, r)
			case r.URL.RawQuery == "page=2":
				w.Header().Set("Link", next.Load().(string))
				w.Write([]byte(`[{"id":2,"name":"b","categoryId":1}]`))
			case r.URL.RawQuery == "page=3":
				w.Write([]byte(`[{"id":3,"name":"c","categoryId":1}]`))
			default:
				w.Header().Set("Link", `<?page=2>; rel="next"`)
				w.Write([]byte(`[{"id":1,"name":"a","categoryId":1}]`))
			}
		})
		base := same.URL + "/v1"
		for _, tt := range []struct {
			name, link string
			refused    bool
		}{
			{"another host", other.URL + "/v1/pets?page=3", true},
			{"another path", "/elsewhere?page=3", true},
			{"a relative path out of the base", "../elsewhere?page=3", true},
			{"dot segments", same.URL + "/v1/../elsewhere?page=3", true},
			{"percent-encoded dot segments", "/v1/%2e%2e/elsewhere?page=3", true},
			{"a path that only starts with the base's", "/v1x/pets?page=3", true},
			{"the base path itself", "/v1?page=3", true},
			{"an absolute URL under the base", base + "/pets?page=3", false},
			{"a path under the base", "/v1/pets?page=3", false},
		} {
			t.Run(tt.name, func(t *testing.T) {
				next.Store("<" + tt.link + `>; rel="next"`)
				before := len(same.received()) + len(other.received())
				ids, last := allIDs(t, base)
				want := []int64{1, 2, 3}
				if tt.refused {
					want = want[:2]
					if !errors.Is(last, client.ErrRedirectRefused) || !strings.Contains(last.Error(), "not under the base URL "+base+";") {
						t.Errorf("the last error = %v; want one wrapping ErrRedirectRefused, saying the link leaves %s", last, base)
					}
				} else if last != nil {
					t.Errorf("the last error = %v; want none", last)
				}
				if diff := cmp.Diff(want, ids); diff != "" {
					t.Errorf("IDs (-want +got):\n%s", diff)
				}
				if k := append(same.received(), other.received()...); len(k) != before {
					t.Errorf("requests outside the base URL arrived, with the keys %q", k[before:])
				}
			})
		}
	})

	t.Run("looping", func(t *testing.T) {
		pages := map[string]string{
			"limit=100": `[{"id":1,"name":"a","categoryId":1},{"id":2,"name":"b","categoryId":1}]`,
			"page=same": `[{"id":2,"name":"b","categoryId":1},{"id":1,"name":"a","categoryId":1}]`,
		}
		srv, _ := hostile(t, func(w http.ResponseWriter, r *http.Request) {
			if p, ok := pages[r.URL.RawQuery]; ok {
				w.Header().Set("Link", `<?page=same>; rel="next"`)
				w.Write([]byte(p))
			} else {
				http.Error(w, "no page "+r.URL.RawQuery, http.StatusTeapot)
			}
		})
		ids, last := allIDs(t, srv.URL+"/v1")
		if diff := cmp.Diff([]int64{1, 2}, ids); diff != "" {
			t.Errorf("IDs (-want +got):\n%s", diff)
		}
		if last == nil || !strings.Contains(last.Error(), "paging is broken") {
			t.Errorf("the last error = %v; want one saying the paging is broken", last)
		}
	})
}

// TestNextLink checks the parsing of Link headers.
func TestNextLink(t *testing.T) {
	tests := []struct {
		name   string
		values []string
		want   string // "" for none
	}{
		{"none", nil, ""},
		{"the server's", []string{`<?limit=2&cursor=a>; rel="next"`}, "?limit=2&cursor=a"},
		{"unquoted", []string{`<?c=1>; rel=next`}, "?c=1"},
		{"case and spaces", []string{`  <?c=1> ;  REL = "Next" `}, "?c=1"},
		{"among others in one value", []string{`<../pets>; rel="successor-version", <?c=2>; rel="next"`}, "?c=2"},
		{"in a second value", []string{`<../pets>; rel="successor-version"`, `<?c=3>; rel="next"`}, "?c=3"},
		{"several types", []string{`<?c=4>; rel="prev next"`}, "?c=4"},
		{"comma in a quoted parameter", []string{`<?a>; title="x, <?b>; rel=next"; rel="prev", <?c=5>; rel="next"`}, "?c=5"},
		{"comma in the target", []string{`<?a=1,2>; rel="next"`}, "?a=1,2"},
		{"other relation only", []string{`<../pets>; rel="successor-version"`}, ""},
		{"next as another parameter", []string{`<?c=6>; title="next"`}, ""},
		{"not a target", []string{`?c=7; rel="next"`}, ""},
		{"unclosed target", []string{`<?c=8; rel="next"`}, ""},
		{"empty", []string{""}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := client.NextLink(tt.values)
			if ok != (tt.want != "") || got != tt.want {
				t.Errorf("NextLink(%q) = %q, %v; want %q", tt.values, got, ok, tt.want)
			}
		})
	}
}
