package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/petstore-go/petstore"
)

// TestPostgresAbandonedCreates runs the server on PostgreSQL while clients
// send creates and hang up 0 to 2 milliseconds after sending, 1,000 times,
// among clients that create normally. It checks that the server logs no
// WARN (or ERROR) for them and keeps every connection of its pool to the
// database, and that the normal clients' creates per second do not fall
// below half of what they are without the abandoning clients: they fell to
// 30% when every abandoned create tore down its database connection. The
// abandoning clients come and go in turns of half a second, so that both
// rates are measured across the same stretch of the run; it logs them.
func TestPostgresAbandonedCreates(t *testing.T) {
	postgresServerURL(t)
	bin := buildServer(t)
	const apiKey = "postgres-abandon-key"
	schema, serverURL := postgresSchema(t)
	// The server's sessions carry a name of their own, so that the test
	// can tell them apart in pg_stat_activity.
	app := "petstore-" + strings.TrimPrefix(schema, "petstore_cmd_test_")
	u, err := url.Parse(serverURL)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("application_name", app)
	u.RawQuery = q.Encode()
	p := startServer(t, bin, apiKey, nil, "-postgres", u.String())
	t.Logf("load average at the start: %s", loadAverage())

	// The normal clients create until stop is closed.
	normal := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	defer normal.CloseIdleConnections()
	const normalClients = 8
	var (
		created atomic.Int64
		stop    = make(chan struct{})
		wg      sync.WaitGroup
	)
	for c := range normalClients {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				_, err := postgresCreate(normal, p.baseURL, apiKey, petstore.NewPet{Name: fmt.Sprintf("normal %d-%d", c, i), CategoryID: 1})
				if err != nil {
					t.Errorf("a normal create: %v", err)
					return
				}
				created.Add(1)
			}
		})
	}
	defer func() {
		close(stop)
		wg.Wait()
	}()
	time.Sleep(time.Second) // warm up, and fill the pool
	before := sessions(t, app)

	const abandoned, turn = 1000, 500 * time.Millisecond
	a := abandoner{t: t, client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}, baseURL: p.baseURL, apiKey: apiKey}
	defer a.client.CloseIdleConnections()
	var alone, beside rate // the normal clients' creates
	for turns := 0; a.hungUp.Load() < abandoned; turns++ {
		if turns == 100 || t.Failed() {
			t.Fatalf("%d creates hung up before they were answered in %d turns; want %d", a.hungUp.Load(), turns, abandoned)
		}
		alone.measure(&created, func() { time.Sleep(turn) })
		beside.measure(&created, func() { a.run(turn) })
	}
	stored, _ := postgresNamed(t, schema, "abandoned %")
	after := sessions(t, app)
	t.Logf("load average at the end: %s", loadAverage())
	t.Logf("%d normal clients: %.0f creates/s alone, %.0f/s beside %d creates abandoned by their clients (%d more were answered before the hang-up; %d of all these were stored)",
		normalClients, alone.perSecond(), beside.perSecond(), a.hungUp.Load(), a.answered.Load(), stored)
	ratio := beside.perSecond() / alone.perSecond()
	t.Logf("beside the abandoned creates, the normal clients made %.2f times as many creates per second as alone", ratio)

	if w := warnings(p.stderr.String()); len(w) > 0 {
		t.Errorf("the server logged %d lines at WARN or above; want none:\n%s", len(w), strings.Join(w, "\n"))
	}
	for _, pid := range before {
		if !slices.Contains(after, pid) {
			t.Errorf("the server's database session %d, open before the abandoned creates, is gone after them (before %v, after %v): a hang-up cost a connection",
				pid, before, after)
		}
	}
	if ratio < 0.5 {
		t.Errorf("the normal clients' creates per second fell to %.2f of what they were alone; want at least half", ratio)
	}
}

// rate sums creates and the time they took over several stretches.
type rate struct {
	creates int64
	took    time.Duration
}

// measure adds to r the creates counted in created while f runs.
func (r *rate) measure(created *atomic.Int64, f func()) {
	n, start := created.Load(), time.Now()
	f()
	r.creates += created.Load() - n
	r.took += time.Since(start)
}

func (r *rate) perSecond() float64 { return float64(r.creates) / r.took.Seconds() }

// abandoner sends creates to the server at baseURL from clients that hang
// up 0 to 2 milliseconds after sending.
type abandoner struct {
	t               *testing.T
	client          *http.Client
	baseURL, apiKey string

	sent             int
	hungUp, answered atomic.Int64 // creates hung up before their answer, and answered first
}

// run starts a create every 3ms for d, and waits for them to end.
func (a *abandoner) run(d time.Duration) {
	var (
		wg   sync.WaitGroup
		tick = time.NewTicker(3 * time.Millisecond)
		end  = time.Now().Add(d)
	)
	defer tick.Stop()
	for time.Now().Before(end) {
		<-tick.C
		i := a.sent
		a.sent++
		wg.Go(func() {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			delay := time.Duration(i%3) * time.Millisecond
			ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
				WroteRequest: func(httptrace.WroteRequestInfo) { time.AfterFunc(delay, cancel) },
			})
			req, err := newCreate(ctx, a.baseURL, a.apiKey, "", petstore.NewPet{Name: fmt.Sprintf("abandoned %d", i), CategoryID: 2})
			if err != nil {
				a.t.Error(err)
				return
			}
			answer, err := do(a.client, req)
			switch {
			case errors.Is(err, context.Canceled):
				a.hungUp.Add(1)
			case err != nil:
				a.t.Errorf("an abandoning client: %v", err)
			case answer.status != http.StatusCreated:
				a.t.Errorf("an abandoning client, answered before it hung up: %v; want 201", answer)
			default:
				a.answered.Add(1)
			}
		})
	}
	wg.Wait()
}

// sessions returns the process IDs of the database sessions named app, in
// ascending order.
func sessions(t *testing.T, app string) []int32 {
	t.Helper()
	ctx := context.Background()
	conn := postgresConn(t)
	rows, err := conn.Query(ctx, "SELECT pid FROM pg_stat_activity WHERE application_name = $1 ORDER BY pid", app)
	if err != nil {
		t.Fatal(err)
	}
	pids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		t.Fatal(err)
	}
	return pids
}

// loadAverage returns the system's load averages over 1, 5 and 15 minutes,
// or why it cannot.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return err.Error()
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}
