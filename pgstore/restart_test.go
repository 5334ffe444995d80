package pgstore_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/client"
	"github.com/petstore-go/petstore/internal/testkit/pgtest"
	"github.com/petstore-go/petstore/internal/testkit/syncbuf"
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
	logs := &syncbuf.Buffer{}
	h, err := petstore.New(petstore.WithStore(store), petstore.WithAuthenticator(petstore.APIKeys(key)),
		petstore.WithLogger(slog.New(slog.NewTextHandler(logs, nil))))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	defer func() {
		if t.Failed() || testing.Verbose() {
			t.Logf("the handler's log:\n%s", logs)
		}
	}()
	base := srv.URL + petstore.DefaultBasePath + "/pets"
	c, err := client.New(srv.URL+petstore.DefaultBasePath, client.WithAPIKey(key), client.WithHTTPClient(&http.Client{Timeout: 10 * time.Second}))
	must(t, err)
	ctx := context.Background()
	var pets []petstore.Pet
	create := func(p petstore.NewPet) {
		t.Helper()
		got, _, err := c.Add(ctx, p, petstore.AddOptions{})
		if err != nil || got.NewPet != p {
			t.Fatalf("create %+v = %+v, %v", p, got, err)
		}
		pets = append(pets, got)
		if all, err := c.List(ctx, petstore.ListOptions{}); err != nil || !cmp.Equal(all, pets) {
			t.Errorf("List = %+v, %v; want %+v", all, err, pets)
		}
	}

	// Before the outage: full service.
	create(petstore.NewPet{Name: "Before", CategoryID: 1, Status: petstore.StatusAvailable})
	create(petstore.NewPet{Name: "Vor dem Ausfall", CategoryID: 2})

	// The outage: every operation answers 503 unavailable with Retry-After,
	// several times over, so that both the pool's broken connections and
	// its failed attempts at new ones are met.
	cluster.Stop(t)
	unavailable := restartAnswer{Status: http.StatusServiceUnavailable, Code: "unavailable", RetryAfter: true}
	for round := range 3 {
		for _, q := range [][2]string{{http.MethodPost, base}, {http.MethodGet, base}, {http.MethodGet, base + "/" + strconv.FormatInt(pets[0].ID, 10)}} {
			start := time.Now()
			if diff := cmp.Diff(unavailable, restartDo(t, key, q[0], q[1])); diff != "" {
				t.Errorf("round %d, database down: %s answered (-want +got):\n%s", round, q, diff)
			}
			t.Logf("database down: %s answered in %v", q, time.Since(start).Round(time.Millisecond))
		}
	}

	// The recovery: the same handler and pool serve again within a bound;
	// meanwhile every answer is 200 or 503 unavailable.
	cluster.Start(t)
	deadline := time.Now().Add(30 * time.Second)
	for attempt := 1; ; attempt++ {
		got := restartDo(t, key, http.MethodGet, base)
		if got.Status == http.StatusOK {
			t.Logf("database back: full service after %d attempts", attempt)
			break
		}
		if diff := cmp.Diff(unavailable, got); diff != "" {
			t.Fatalf("database back, attempt %d: GET %s answered (-want +got):\n%s", attempt, base, diff)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the database is back, but after %d attempts in 30s the handler still answers 503", attempt)
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, p := range pets {
		if got, err := c.Get(ctx, p.ID); err != nil || got != p {
			t.Errorf("after the outage, Get(%d) = %+v, %v; it was created as %+v", p.ID, got, err, p)
		}
	}
	create(petstore.NewPet{Name: "After", CategoryID: 3, Status: petstore.StatusSold})
}

// restartAnswer is what the restart test checks of an answer.
type restartAnswer struct {
	Status     int
	Code       string // of an error body; "" otherwise
	RetryAfter bool   // whether Retry-After is set
}

// restartDo makes the request, with a pet to create for a POST, and
// describes the answer.
func restartDo(t *testing.T, key, method, target string) restartAnswer {
	t.Helper()
	body := ""
	if method == http.MethodPost {
		body = `{"name":"During","categoryId":9}`
	}
	req, err := http.NewRequest(method, target, strings.NewReader(body))
	must(t, err)
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, target, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	a := restartAnswer{Status: resp.StatusCode, RetryAfter: resp.Header.Get("Retry-After") != ""}
	if err == nil && resp.StatusCode >= 400 {
		var e struct{ Code string }
		err = json.Unmarshal(b, &e)
		a.Code = e.Code
	}
	if err != nil {
		t.Fatalf("%s %s answered %d: %v in %q", method, target, resp.StatusCode, err, b)
	}
	return a
}
