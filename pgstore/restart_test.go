package pgstore_test

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/internal/testkit/pgtest"
)

// TestRestart stops the database under a running handler and starts it
// again: while it is down every request answers 503 unavailable with
// Retry-After, promptly; once it is back, the same handler on the same pool
// serves fully again, and the pets created before the outage are there.
//
// The database is a throwaway cluster that the test creates with initdb in
// a temporary directory and serves on a free port of its own. The test is
// skipped where PostgreSQL's server binaries are not installed.
func TestRestart(t *testing.T) {
	cluster := pgtest.NewCluster(t)
	cluster.Start(t)

	store := pgMigrate(t, pgNew(t, urlPool(t, cluster.URL(), func(c *pgxpool.Config) { c.MaxConns = 4 })))

	const key = "restart-key"
	logs := &lockedBuffer{}
	h, err := petstore.New(
		petstore.WithStore(store),
		petstore.WithAuthenticator(petstore.APIKeys(key)),
		petstore.WithLogger(slog.New(slog.NewTextHandler(logs, nil))),
	)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	c := &restartClient{
		base: srv.URL + petstore.DefaultBasePath + "/pets",
		key:  key,
		http: &http.Client{Timeout: 10 * time.Second},
	}
	defer func() {
		if t.Failed() || testing.Verbose() {
			t.Logf("the handler's log:\n%s", logs)
		}
	}()

	// Before the outage: full service.
	before := []petstore.NewPet{
		{Name: "Before", CategoryID: 1, Status: petstore.StatusAvailable},
		{Name: "Vor dem Ausfall", CategoryID: 2},
	}
	var pets []petstore.Pet
	for _, p := range before {
		pets = append(pets, c.mustCreate(t, p))
	}
	c.mustList(t, pets)

	// The outage: every operation answers 503 unavailable with Retry-After,
	// several times over, so that both the pool's broken connections and
	// its failed attempts at new ones are met.
	cluster.Stop(t)
	unavailable := restartAnswer{Status: http.StatusServiceUnavailable, Code: "unavailable", RetryAfter: true}
	for round := range 3 {
		for _, q := range c.operations(pets[0].ID) {
			start := time.Now()
			got, err := c.do(q)
			if err != nil {
				t.Fatalf("round %d, database down: %s: %v", round, q, err)
			}
			if diff := cmp.Diff(unavailable, got); diff != "" {
				t.Errorf("round %d, database down: %s answered (-want +got):\n%s", round, q, diff)
			}
			t.Logf("database down: %s answered %d in %v", q, got.Status, time.Since(start).Round(time.Millisecond))
		}
	}

	// The recovery: the same handler and pool serve again within a bound;
	// meanwhile every answer is 200 or 503 unavailable.
	cluster.Start(t)
	deadline := time.Now().Add(30 * time.Second)
	for attempt := 1; ; attempt++ {
		got, err := c.do(restartRequest{method: http.MethodGet, target: c.base})
		if err != nil {
			t.Fatalf("database back, attempt %d: %v", attempt, err)
		}
		if got.Status == http.StatusOK {
			t.Logf("database back: full service after %d attempts", attempt)
			break
		}
		if diff := cmp.Diff(unavailable, got); diff != "" {
			t.Fatalf("database back, attempt %d: GET %s answered (-want +got):\n%s", attempt, c.base, diff)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the database is back, but after %d attempts in 30s the handler still answers 503", attempt)
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, p := range pets {
		if got := c.mustGet(t, p.ID); got != p {
			t.Errorf("after the outage, pet %d is %+v; it was created as %+v", p.ID, got, p)
		}
	}
	pets = append(pets, c.mustCreate(t, petstore.NewPet{Name: "After", CategoryID: 3, Status: petstore.StatusSold}))
	c.mustList(t, pets)
}

// restartAnswer is what the restart test checks of an answer.
type restartAnswer struct {
	Status     int
	Code       string // of an error body; "" otherwise
	RetryAfter bool   // whether Retry-After is set
}

// restartRequest is a request of the restart test.
type restartRequest struct {
	method, target, body string
}

func (q restartRequest) String() string { return q.method + " " + q.target }

// restartClient makes the restart test's requests, each bounded by the
// client's timeout.
type restartClient struct {
	base string // the collection's URL
	key  string
	http *http.Client
}

// operations returns a request for each operation of the API.
func (c *restartClient) operations(id int64) []restartRequest {
	return []restartRequest{
		{method: http.MethodPost, target: c.base, body: `{"name":"During","categoryId":9}`},
		{method: http.MethodGet, target: c.base},
		{method: http.MethodGet, target: c.base + "/" + strconv.FormatInt(id, 10)},
	}
}

// send makes the request and returns the response with its body read.
func (c *restartClient) send(q restartRequest) (*http.Response, []byte, error) {
	req, err := http.NewRequest(q.method, q.target, strings.NewReader(q.body))
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	if q.body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, b, err
}

// do makes the request and describes the answer.
func (c *restartClient) do(q restartRequest) (restartAnswer, error) {
	resp, b, err := c.send(q)
	if err != nil {
		return restartAnswer{}, err
	}
	a := restartAnswer{Status: resp.StatusCode, RetryAfter: resp.Header.Get("Retry-After") != ""}
	if resp.StatusCode >= 400 {
		var e struct{ Code string }
		if err := json.Unmarshal(b, &e); err != nil {
			return a, fmt.Errorf("%s answered %d with a body that is not a JSON error: %q", q, resp.StatusCode, b)
		}
		a.Code = e.Code
	}
	return a, nil
}

// mustCreate creates p and returns it as stored.
func (c *restartClient) mustCreate(t *testing.T, p petstore.NewPet) petstore.Pet {
	t.Helper()
	body, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var got petstore.Pet
	c.mustDo(t, restartRequest{method: http.MethodPost, target: c.base, body: string(body)}, http.StatusCreated, &got)
	if got.ID < 1 || got.NewPet != p {
		t.Fatalf("POST %s of %+v answered %+v", c.base, p, got)
	}
	return got
}

// mustGet returns the pet with the given ID.
func (c *restartClient) mustGet(t *testing.T, id int64) petstore.Pet {
	t.Helper()
	var got petstore.Pet
	c.mustDo(t, restartRequest{method: http.MethodGet, target: c.base + "/" + strconv.FormatInt(id, 10)}, http.StatusOK, &got)
	return got
}

// mustList checks that the collection holds exactly want.
func (c *restartClient) mustList(t *testing.T, want []petstore.Pet) {
	t.Helper()
	var got []petstore.Pet
	c.mustDo(t, restartRequest{method: http.MethodGet, target: c.base}, http.StatusOK, &got)
	want = append([]petstore.Pet(nil), want...)
	sort.Slice(want, func(i, j int) bool { return want[i].ID < want[j].ID })
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("GET %s (-want +got):\n%s", c.base, diff)
	}
}

// mustDo makes the request, checks its status and decodes its body into v.
func (c *restartClient) mustDo(t *testing.T, q restartRequest, status int, v any) {
	t.Helper()
	resp, b, err := c.send(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	if resp.StatusCode != status {
		t.Fatalf("%s answered %d, want %d: %s", q, resp.StatusCode, status, b)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v in %q", q, err, b)
	}
}
