package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/client"
)

// hostile starts a server that answers every request with h, and counts
// the requests.
func hostile(t *testing.T, h http.HandlerFunc) (*httptest.Server, *atomic.Int64) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.Header().Set("Content-Type", "application/json")
		h(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// answer returns a handler that answers with status and body.
func answer(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(status)
		w.Write([]byte(body))
	}
}

// page returns a JSON array of n pets with IDs from first, the name name
// and the status status ("" for none).
func page(first int64, n int, name string, status petstore.Status) string {
	pets := make([]petstore.Pet, n)
	for i := range pets {
		pets[i] = petstore.Pet{ID: first + int64(i), NewPet: petstore.NewPet{Name: name, CategoryID: 1, Status: status}}
	}
	b, _ := json.Marshal(pets)
	return string(b)
}

// TestBadResponse checks that the client refuses answers it cannot trust,
// with an error wrapping ErrBadResponse that says what was wrong, shows no
// huge value, and is not retried.
func TestBadResponse(t *testing.T) {
	rex := petstore.NewPet{Name: "Rex", CategoryID: 1, Status: petstore.StatusAvailable}
	huge := strings.Repeat("x", 20_000)
	add := func(c *client.Client) error { _, _, err := c.Add(t.Context(), rex, petstore.AddOptions{}); return err }
	get := func(c *client.Client) error { _, err := c.Get(t.Context(), 7); return err }
	list := func(opts petstore.ListOptions) func(c *client.Client) error {
		return func(c *client.Client) error { _, err := c.List(t.Context(), opts); return err }
	}
	tests := []struct {
		name   string
		answer http.HandlerFunc
		call   func(c *client.Client) error
		want   []string // in the error
	}{
		{"Add: a negative ID", answer(201, `{"id":-5,"name":"Rex","categoryId":1,"status":"available"}`), add, []string{"its ID is -5, not positive"}},
		{"Add: ID 0", answer(201, `{"name":"Rex","categoryId":1,"status":"available"}`), add, []string{"its ID is 0"}},
		{"Add: another name", answer(201, `{"id":1,"name":"Tom","categoryId":1,"status":"available"}`), add, []string{`its name is "Tom", not "Rex"`}},
		{"Add: a huge other name", answer(201, `{"id":1,"name":"`+huge+`","categoryId":1,"status":"available"}`), add, []string{`its name is "xxxx`, "… (20000 bytes)"}},
		{"Add: everything else", answer(201, `{"id":-1,"name":"Tom","categoryId":9,"status":"sold"}`), add,
			[]string{"its ID is -1", `its name is "Tom"`, "its categoryId is 9, not 1", `its status is "sold", not "available"`}},
		{"Add: a body over the limit", answer(201, `{"id":1,"name":"Rex","categoryId":1,"status":"available","x":"`+strings.Repeat("y", 70_000)+`"}`), add, []string{"over 65536 bytes"}},
		{"Get: another ID", answer(200, `{"id":8,"name":"Rex","categoryId":1}`), get, []string{"the pet with ID 8, not 7"}},
		{"Get: a body over the limit", answer(200, `{"id":7,"name":"`+strings.Repeat("y", 70_000)+`","categoryId":1}`), get, []string{"over 65536 bytes"}},
		{"List: an ID not positive", answer(200, `[{"id":1,"name":"a","categoryId":1},{"id":-3,"name":"b","categoryId":1}]`), list(petstore.ListOptions{}), []string{"a pet with ID -3, not positive"}},
		{"List: another status", answer(200, page(1, 2, "a", petstore.StatusSold)), list(petstore.ListOptions{Status: petstore.StatusPending}),
			[]string{`the pet 1 with the status "sold", not "pending"`}},
		{"List: more pets than asked", answer(200, page(1, 101, "a", "")), list(petstore.ListOptions{}), []string{"the page holds 101 pets, more than the 100 asked for"}},
		{"List: a name too long", answer(200, page(1, 1, strings.Repeat("é", 257), "")), list(petstore.ListOptions{}), []string{"the pet 1 with a name of 514 bytes, longer than the 256 characters"}},
		{"List: a page over the limit", answer(200, page(1, 100, strings.Repeat("€", 256), "")+strings.Repeat(" ", 400_000)), list(petstore.ListOptions{}), []string{"over 475136 bytes"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, requests := hostile(t, tt.answer)
			var w waits
			err := tt.call(newClient(t, srv.URL, client.WithRetries(2), w.option()))
			t.Logf("error: %v", err)
			if !errors.Is(err, client.ErrBadResponse) {
				t.Errorf("errors.Is(err, ErrBadResponse) = false")
			}
			if errors.Is(err, petstore.ErrUnavailable) {
				t.Errorf("errors.Is(err, petstore.ErrUnavailable) = true; the server answered")
			}
			for _, s := range tt.want {
				if err == nil || !strings.Contains(err.Error(), s) {
					t.Errorf("the error does not say %q", s)
				}
			}
			if err != nil && len(err.Error()) > 600 {
				t.Errorf("the error is %d bytes long; long values must be cut", len(err.Error()))
			}
			if n := requests.Load(); n != 1 {
				t.Errorf("%d requests; a bad answer is not retried", n)
			}
		})
	}
}

// endless starts a server whose listing never ends: every page holds the
// pets asked for, named name, and links to the next, up to maxPages pages
// (0 for no end), after which the chain stops. It counts the pages served.
func endless(t *testing.T, name string, maxPages int64) (*httptest.Server, *atomic.Int64) {
	return hostile(t, func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		limit, err := strconv.Atoi(q.Get("limit"))
		if err != nil {
			limit = 100
		}
		after, _ := strconv.ParseInt(q.Get("cursor"), 36, 64)
		n := after/int64(limit) + 1 // this page's number
		if maxPages == 0 || n < maxPages {
			w.Header().Set("Link", "<?limit="+strconv.Itoa(limit)+"&cursor="+strconv.FormatInt(after+int64(limit), 36)+`>; rel="next"`)
		}
		w.Write([]byte(page(after+1, limit, name, "")))
	})
}

// TestListBound checks that List without a Limit stops at its bound with
// an error wrapping ErrTooManyPets, whatever a server sends, and that a
// Limit is a bound of its own.
func TestListBound(t *testing.T) {
	tests := []struct {
		name      string
		opts      []client.Option
		list      petstore.ListOptions
		wantPets  int // 0 for an error
		wantPages int64
	}{
		{"the default bound", nil, petstore.ListOptions{}, 0, client.MaxListPets/100 + 1},
		{"a bound of 250", []client.Option{client.WithMaxListPets(250)}, petstore.ListOptions{}, 0, 3},
		{"a bound of whole pages", []client.Option{client.WithMaxListPets(200), client.WithPageSize(50)}, petstore.ListOptions{}, 0, 5},
		{"a Limit over the bound", []client.Option{client.WithMaxListPets(250)}, petstore.ListOptions{Limit: 420}, 420, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// 200 pages, 20,000 pets, are more than the default bound.
			srv, pages := endless(t, "pet", 200)
			pets, err := newClient(t, srv.URL, tt.opts...).List(t.Context(), tt.list)
			if tt.wantPets == 0 {
				if !errors.Is(err, client.ErrTooManyPets) || !strings.Contains(err.Error(), "ListOptions.Limit") || !strings.Contains(err.Error(), "All") {
					t.Errorf("List = %d pets, %v; want an error wrapping ErrTooManyPets that names ListOptions.Limit and All", len(pets), err)
				}
				if pets != nil {
					t.Errorf("List returned %d pets with its error", len(pets))
				}
			} else if err != nil || len(pets) != tt.wantPets {
				t.Errorf("List = %d pets, %v; want %d pets", len(pets), err, tt.wantPets)
			}
			if n := pages.Load(); n != tt.wantPages {
				t.Errorf("List read %d pages; want %d", n, tt.wantPages)
			}
		})
	}
}

// heapAfterGC returns the bytes of live heap objects.
func heapAfterGC() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestAllStreams checks that All holds one page at a time: its heap does
// not grow with the number of pages of a listing that never ends.
func TestAllStreams(t *testing.T) {
	// Pages of 100 pets with the longest names, of 768 bytes: about 80 KB
	// of JSON a page, and 11.5 MB of names in the 150 pages between the two
	// readings.
	srv, _ := endless(t, strings.Repeat("€", petstore.MaxNameLength), 0)
	const first, last = 20, 170
	var atFirst uint64
	n := 0
	for p, err := range newClient(t, srv.URL).All(t.Context(), petstore.ListOptions{}) {
		must(t, err)
		if n++; int64(n) != p.ID {
			t.Fatalf("pet %d has ID %d", n, p.ID)
		}
		switch n {
		case first * 100:
			atFirst = heapAfterGC()
		case last * 100:
			grown := int64(heapAfterGC()) - int64(atFirst)
			t.Logf("the heap after %d pages: %d bytes; after %d pages: %+d bytes", first, atFirst, last, grown)
			if grown > 4<<20 {
				t.Errorf("the heap grew by %d bytes over %d pages; All must hold one page at a time", grown, last-first)
			}
		}
		if n == last*100 {
			break
		}
	}
}

// TestTimeout checks that a request that gets no whole answer within the
// timeout of WithTimeout fails, is retried, and ends, also with a caller's
// http.Client, which it does not change.
func TestTimeout(t *testing.T) {
	drip := func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		w.Write([]byte(`{"id":1,`))
		for {
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
			w.Write([]byte(" "))
		}
	}
	silent := func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() }
	tests := []struct {
		name    string
		handler http.HandlerFunc
		hc      *http.Client // nil for the default
	}{
		{"a body that drips", drip, nil},
		{"a body that drips, a caller's client", drip, &http.Client{}},
		{"no answer", silent, nil},
		{"no answer, a caller's client", silent, &http.Client{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, requests := hostile(t, tt.handler)
			var w waits
			opts := []client.Option{client.WithTimeout(300 * time.Millisecond), client.WithRetries(1), w.option()}
			if tt.hc != nil {
				opts = append(opts, client.WithHTTPClient(tt.hc))
			}
			// Without the timeout, the call would last until this
			// context's deadline, with an error that does not name
			// WithTimeout.
			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
			defer cancel()
			_, err := newClient(t, srv.URL, opts...).Get(ctx, 1)
			t.Logf("error: %v", err)
			if ctx.Err() != nil {
				t.Fatalf("Get lasted until the context's deadline: %v", err)
			}
			if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, petstore.ErrUnavailable) || !strings.Contains(err.Error(), "WithTimeout") {
				t.Errorf("want an error naming WithTimeout, wrapping context.DeadlineExceeded and petstore.ErrUnavailable")
			}
			if n := requests.Load(); n != 2 {
				t.Errorf("%d requests; want 2, one retry", n)
			}
			if tt.hc != nil && (tt.hc.Timeout != 0 || tt.hc.CheckRedirect != nil) {
				t.Errorf("the caller's http.Client was changed: %+v", tt.hc)
			}
		})
	}
}

// TestTimeoutOption checks the default timeout, and that WithTimeout(0)
// turns it off. TestListBound checks the bound of List and its option.
func TestTimeoutOption(t *testing.T) {
	for _, tt := range []struct {
		opts []client.Option
		want time.Duration
	}{{nil, client.DefaultTimeout}, {[]client.Option{client.WithTimeout(0)}, 0}} {
		c, err := client.New("https://pets.example.com/v1", append(tt.opts, client.WithAPIKey("k"))...)
		must(t, err)
		if got := client.Timeout(c); got != tt.want {
			t.Errorf("the timeout is %v; want %v", got, tt.want)
		}
	}
}
