package petstore_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/httpapi"
	"github.com/petstore-go/petstore/internal/testkit/faultstore"
	"github.com/petstore-go/petstore/memstore"
)

// faultsEnv is a handler on a faultstore wrapping a seeded memstore,
// logging JSON records to log.
type faultsEnv struct {
	h     http.Handler
	fs    *faultstore.Store
	store *memstore.Store
	log   *logBuffer
}

func faultsNewEnv(t *testing.T, opts ...petstore.Option) faultsEnv {
	t.Helper()
	store := seededStore(t)
	fs := faultstore.New(store)
	log := &logBuffer{}
	opts = append([]petstore.Option{
		petstore.WithLogger(slog.New(slog.NewJSONHandler(log, &slog.HandlerOptions{Level: slog.LevelDebug}))),
	}, opts...)
	return faultsEnv{h: newHandler(t, fs, opts...), fs: fs, store: store, log: log}
}

// faultsOp is a request that calls one store method, and the status of its
// success.
type faultsOp struct {
	method             faultstore.Method
	op                 petstore.Operation
	ok                 int
	verb, target, body string
}

// faultsOps returns a faultsOp for each store method.
func faultsOps() []faultsOp {
	return []faultsOp{
		{faultstore.List, petstore.OpListPets, http.StatusOK, http.MethodGet, "/v1/pets", ""},
		{faultstore.Get, petstore.OpGetPet, http.StatusOK, http.MethodGet, "/v1/pets/2", ""},
		{faultstore.Add, petstore.OpCreatePet, http.StatusCreated, http.MethodPost, "/v1/pets", `{"name":"Rex","categoryId":7}`},
	}
}

func (o faultsOp) req(t *testing.T, ctx context.Context) *http.Request {
	t.Helper()
	return newRequestContext(t, ctx, o.verb, o.target, o.body, nil)
}

// do serves o's request with ctx on env and checks the common parts of the
// answer.
func (env faultsEnv) do(t *testing.T, o faultsOp, ctx context.Context) (*httptest.ResponseRecorder, httpapi.Code) {
	t.Helper()
	w := serve(env.h, o.req(t, ctx))
	return w, checkResponse(t, w)
}

// faultsFind returns the log records with message msg.
func faultsFind(recs []map[string]any, msg string) []map[string]any {
	return slices.DeleteFunc(recs, func(rec map[string]any) bool { return rec["msg"] != msg })
}

// faultsInternalBody is the whole body of every 500.
const faultsInternalBody = `{"code":"internal","message":"internal error","status":500,"type":"https://github.com/petstore-go/petstore/blob/main/docs/errors.md#internal","title":"Internal error"}` + "\n"

// TestFaultStoreErrors: a store error wrapping ErrUnavailable gives 503
// unavailable with Retry-After, logged at WARN; any other, ErrNotFound from
// List or Add among them, gives 500 with a body that says only "internal
// error", logged at ERROR, and so does a panic, logged with its stack; each
// is observed as it was answered.
// None reveals the error nor changes anything, and once the store is back
// (the fault was for one call) the same handler serves the next request.
func TestFaultStoreErrors(t *testing.T) {
	const unavailable, failed, panicked = "petstore: store unavailable", "petstore: store failed", "petstore: panic serving request"
	cases := []struct {
		name  string
		fault faultstore.Fault
		log   string
	}{
		{"sentinel", faultstore.Fault{Err: petstore.ErrUnavailable}, unavailable},
		{"wrapped", faultstore.Fault{Err: fmt.Errorf("pgstore: dial tcp 10.1.2.3:5432: connection refused: %w",
			petstore.ErrUnavailable)}, unavailable},
		{"joined", faultstore.Fault{Err: errors.Join(errors.New("pool exhausted"), petstore.ErrUnavailable)}, unavailable},
		{"driver", faultstore.Fault{Err: fmt.Errorf("pgstore: %w",
			errors.New(`pq: relation "pets" does not exist (host=db.internal user=petstore)`))}, failed},
		{"not found", faultstore.Fault{Err: fmt.Errorf("pgstore: %w", petstore.ErrNotFound)}, failed},
		{"panic string", faultstore.Fault{Panic: "index out of range in the driver (secret detail)"}, panicked},
		{"panic error", faultstore.Fault{Panic: fmt.Errorf("driver state corrupt (secret detail)")}, panicked},
		{"panic int", faultstore.Fault{Panic: 42}, panicked},
	}
	for _, o := range faultsOps() {
		for _, c := range cases {
			if c.name == "not found" && o.op == petstore.OpGetPet {
				continue // getPet answers 404 for it, as TestWire shows
			}
			t.Run(string(o.op)+"/"+c.name, func(t *testing.T) {
				var observed petstore.Observation
				env := faultsNewEnv(t, petstore.WithRetryAfter(2500*time.Millisecond),
					petstore.WithObserver(func(_ context.Context, o petstore.Observation) { observed = o }))
				before := snapshot(t, env.store)
				fault := c.fault
				fault.Times = 1
				env.fs.Set(o.method, fault)

				w, code := env.do(t, o, context.Background())
				status, retry := http.StatusServiceUnavailable, "3" // 2.5 s rounded up
				want := map[string]any{"level": "WARN", "operation": string(o.op)}
				switch c.log {
				case unavailable:
					want["error"] = c.fault.Err.Error()
				case failed:
					status, retry, want["level"], want["error"] = http.StatusInternalServerError, "", "ERROR", c.fault.Err.Error()
				case panicked:
					status, retry, want = http.StatusInternalServerError, "", map[string]any{"level": "ERROR", "panic": fmt.Sprint(c.fault.Panic)}
				}
				if w.Code != status || status == http.StatusServiceUnavailable && code != httpapi.CodeUnavailable {
					t.Fatalf("status %d %s, want %d", w.Code, w.Body, status)
				}
				if observed.Status != w.Code || observed.Code != code || observed.Operation != o.op {
					t.Errorf("observed %d %s of %s, want the answer %d %s of %s", observed.Status, observed.Code, observed.Operation, w.Code, code, o.op)
				}
				if diff := cmp.Diff(faultsInternalBody, w.Body.String()); status == 500 && diff != "" {
					t.Errorf("body (-want +got):\n%s", diff)
				}
				if got := w.Header().Get("Retry-After"); got != retry {
					t.Errorf("Retry-After = %q, want %q", got, retry)
				}
				if strings.Contains(w.Body.String(), "10.1.2.3") || strings.Contains(w.Body.String(), "pool") {
					t.Errorf("body %s reveals the store's error", w.Body)
				}
				if got := env.fs.Calls(o.method); got != 1 {
					t.Errorf("store calls = %d, want 1", got)
				}
				checkUnchanged(t, env.store, before)
				recs := faultsFind(env.log.records(t), c.log)
				if len(recs) != 1 {
					t.Fatalf("log has %d %q records, want 1:\n%s", len(recs), c.log, env.log)
				}
				got := map[string]any{}
				for k := range want {
					got[k] = recs[0][k]
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("log record (-want +got):\n%s", diff)
				}
				if stack, _ := recs[0]["stack"].(string); c.log == panicked && !strings.Contains(stack, "faultstore") {
					t.Errorf("logged stack does not show where the panic happened:\n%s", stack)
				}
				if w, code := env.do(t, o, context.Background()); w.Code != o.ok || code != "" {
					t.Fatalf("the request after the fault: status %d %s, want %d", w.Code, w.Body, o.ok)
				}
			})
		}
	}
}

// TestFaultAbortHandlerPassesThrough: a panic with http.ErrAbortHandler is
// not answered but passed on, so that net/http aborts the response quietly.
func TestFaultAbortHandlerPassesThrough(t *testing.T) {
	env := faultsNewEnv(t)
	env.fs.Set(faultstore.List, faultstore.Fault{Panic: http.ErrAbortHandler})
	defer func() {
		if v := recover(); v != http.ErrAbortHandler {
			t.Errorf("recovered %v, want http.ErrAbortHandler", v)
		}
	}()
	env.h.ServeHTTP(httptest.NewRecorder(), faultsOps()[0].req(t, context.Background()))
	t.Error("ServeHTTP returned")
}

// TestFaultContexts: a slow store is waited for while the request lasts. A
// store call that outlives the request's deadline, or WithStoreTimeout, is
// answered 503 and has stored nothing; one that outlives WithStoreTimeout
// carries Retry-After and is logged at WARN with its operation. A request
// whose client has gone away before the store is called never reaches the
// store, whether the client left before the request was served, during
// authentication or while sending the body; each is recorded as 499
// client_closed_request with no body, never as a 5xx, and logged at debug
// under its own message, not as a store outage.
func TestFaultContexts(t *testing.T) {
	for _, o := range faultsOps() {
		for _, c := range []struct {
			name         string
			delay        time.Duration // of the store
			storeTimeout bool
			status       int
			calls        int
			retry        string
			log          string // the one record, if checked
		}{
			{name: "slow", delay: 20 * time.Millisecond, status: o.ok, calls: 1},
			{name: "deadline", delay: time.Hour, status: 503, calls: 1, retry: "1"},
			{name: "store timeout", delay: time.Hour, storeTimeout: true, status: 503, calls: 1, retry: "1", log: "WARN petstore: store timed out"},
			{name: "gone before", status: 499, log: "DEBUG petstore: client went away"},
			{name: "gone during authentication", status: 499},
			{name: "gone during upload", status: 499},
		} {
			if c.name == "gone during upload" && o.body == "" {
				continue
			}
			t.Run(string(o.op)+"/"+c.name, func(t *testing.T) {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				opts := []petstore.Option{petstore.WithAuthenticator(petstore.AuthenticatorFunc(func(ctx context.Context, op petstore.Operation, token string) (context.Context, error) {
					if c.name == "gone during authentication" {
						cancel() // the client hangs up while the key is checked
					}
					return petstore.APIKeys(testKey).Authenticate(ctx, op, token)
				}))}
				switch {
				case c.storeTimeout:
					opts = append(opts, petstore.WithStoreTimeout(20*time.Millisecond))
				case c.name == "deadline":
					ctx, cancel = context.WithTimeout(ctx, 20*time.Millisecond)
					defer cancel()
					// Later than the deadline, it bounds only a create's
					// store call, detached from the request, which the test
					// would otherwise wait out for the default 5 s.
					opts = append(opts, petstore.WithStoreTimeout(200*time.Millisecond))
				case c.name == "gone before":
					cancel()
				}
				env := faultsNewEnv(t, opts...)
				env.fs.Set(o.method, faultstore.Fault{Delay: c.delay}) // a delay of an hour stalls until its context is done
				before := snapshot(t, env.store)
				r := o.req(t, ctx)
				body := &faultsHangUp{r: strings.NewReader(o.body), cancel: cancel}
				if c.name == "gone during upload" {
					r.Body = io.NopCloser(body)
				}
				w := serve(env.h, r)
				code := httpapi.Code("")
				if w.Code != 499 {
					code = checkResponse(t, w)
				}
				if wantCode := map[int]httpapi.Code{503: httpapi.CodeUnavailable}[c.status]; w.Code != c.status || code != wantCode || w.Code == 499 && w.Body.Len() != 0 {
					t.Fatalf("status %d %s %q, want %d %s, and no body for a 499, which nobody reads", w.Code, code, w.Body, c.status, wantCode)
				}
				if got := env.fs.TotalCalls(); got != c.calls {
					t.Errorf("store calls = %d, want %d", got, c.calls)
				}
				if c.status != o.ok {
					checkUnchanged(t, env.store, before)
				}
				if got := w.Header().Get("Retry-After"); got != c.retry {
					t.Errorf("Retry-After %q, want %q", got, c.retry)
				}
				if got := env.log.levels(t); c.log != "" && !cmp.Equal(got, []string{c.log + " " + string(o.op)}) {
					t.Errorf("log %q, want only %s", got, c.log)
				}
				if c.name == "gone during upload" && !body.done {
					t.Fatal("the handler did not read the body to its end")
				}
			})
		}
	}
}

// faultsHangUp is a request body whose client hangs up once the last byte
// has been read.
type faultsHangUp struct {
	r      io.Reader
	cancel context.CancelFunc
	done   bool
}

func (b *faultsHangUp) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if errors.Is(err, io.EOF) {
		b.done = true
		b.cancel()
	}
	return n, err
}

// TestFaultsConcurrent serves requests from many goroutines while faults
// come and go. Every answer is a success, a 500 or a 503 with a well-formed
// body, and every create that was answered 201 is stored exactly once with
// the fields it was sent with, and no other pet appears.
func TestFaultsConcurrent(t *testing.T) {
	env := faultsNewEnv(t)
	before := snapshot(t, env.store)
	const workers, perWorker = 8, 60
	faults := []faultstore.Fault{
		{},
		{Err: petstore.ErrUnavailable},
		{Err: errors.New("disk full")},
		{Panic: "driver bug"},
		{Delay: time.Millisecond},
	}

	var mu sync.Mutex
	created := map[int64]petstore.NewPet{}
	var wg sync.WaitGroup
	for g := range workers {
		wg.Go(func() {
			for i := range perWorker {
				m := faultstore.Methods()[(g+i)%len(faultstore.Methods())]
				env.fs.Set(m, faults[(g*7+i)%len(faults)])
				p := petstore.NewPet{Name: fmt.Sprintf("worker %d pet %d", g, i), CategoryID: int64(g + 1)}
				reqs := []faultsOp{
					{verb: http.MethodPost, target: "/v1/pets", body: marshal(t, p)},
					{verb: http.MethodGet, target: "/v1/pets/1"},
					{verb: http.MethodGet, target: "/v1/pets?limit=5"},
				}
				w, code := env.do(t, reqs[i%3], context.Background())
				switch {
				case w.Code == http.StatusCreated:
					var got petstore.Pet
					if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					created[got.ID] = p
					mu.Unlock()
				case w.Code == http.StatusOK:
				case code == httpapi.CodeInternal, code == httpapi.CodeUnavailable:
				default:
					t.Errorf("status %d %s", w.Code, w.Body)
				}
			}
		})
	}
	wg.Wait()

	after := snapshot(t, env.store)
	if len(after) != len(before)+len(created) {
		t.Errorf("store holds %d pets, want %d before and %d acknowledged", len(after), len(before), len(created))
	}
	for _, p := range after[len(before):] {
		want, ok := created[p.ID]
		if !ok {
			t.Errorf("pet %d is stored but was never acknowledged", p.ID)
			continue
		}
		if diff := cmp.Diff(want, p.NewPet); diff != "" {
			t.Errorf("pet %d (-sent +stored):\n%s", p.ID, diff)
		}
	}
	t.Logf("%d requests, %d pets created and verified", workers*perWorker, len(created))
}

// TestFaultCreateOutlivesItsClient: a create that has reached the store
// runs to completion when its client hangs up, and nothing is logged for
// it.
func TestFaultCreateOutlivesItsClient(t *testing.T) {
	store := newHeldStore(memstore.New(), func(m faultstore.Method, _ int64) bool { return m == faultstore.Add })
	log := &logBuffer{}
	h := newHandler(t, store, petstore.WithLogger(slog.New(slog.NewJSONHandler(log, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	ctx, hangUp := context.WithCancel(t.Context())
	served := make(chan int)
	go func() { served <- serve(h, faultsOps()[2].req(t, ctx)).Code }()
	<-store.arrived
	hangUp()
	close(store.release)
	if err := <-store.ctxErr; err != nil {
		t.Errorf("the store's context was done (%v) when the client hung up; the create must run to completion", err)
	}
	if code := <-served; code != http.StatusCreated {
		t.Errorf("status %d, want 201 (written to nobody)", code)
	}
	if n := store.Len(); n != 1 {
		t.Errorf("the store holds %d pets, want the 1 created", n)
	}
	if recs := log.records(t); len(recs) != 0 {
		t.Errorf("logged %v for a create whose client hung up", recs)
	}
}

// TestClientClosedRequest: a client that hangs up over a real connection
// while the store works on its read is observed as 499
// client_closed_request, not as a 503, and logged at debug only.
func TestClientClosedRequest(t *testing.T) {
	for _, op := range faultsOps()[:2] { // the reads
		t.Run(op.target, func(t *testing.T) {
			observed := make(chan petstore.Observation, 1)
			env := faultsNewEnv(t, petstore.WithObserver(func(_ context.Context, o petstore.Observation) { observed <- o }))
			env.fs.Set(op.method, faultstore.Fault{Delay: time.Hour}) // it waits until its context is done
			srv := newServer(t, env.h)

			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+op.target, nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer "+testKey)
			errc := make(chan error, 1)
			go func() {
				resp, err := srv.Client().Do(req)
				if err == nil {
					resp.Body.Close()
				}
				errc <- err
			}()
			waitFor(t, "the store to be called", func() bool { return env.fs.Calls(op.method) > 0 })
			cancel()
			if err := <-errc; !errors.Is(err, context.Canceled) {
				t.Fatalf("the client's request ended with %v, want context.Canceled", err)
			}
			var o petstore.Observation
			select {
			case o = <-observed:
			case <-time.After(10 * time.Second):
				t.Fatal("the request was not observed")
			}
			want := petstore.Observation{Status: 499, Code: httpapi.CodeClientClosedRequest, Method: http.MethodGet}
			got := petstore.Observation{Status: o.Status, Code: o.Code, Method: o.Method}
			if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("observation (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"DEBUG petstore: client went away " + string(op.op)}, env.log.levels(t)); diff != "" {
				t.Errorf("log (-want +got):\n%s", diff)
			}
		})
	}
}

// TestBodyTimeout: over a real connection to an http.Server without
// timeouts of its own, a client that sends half a body and stalls is
// answered 400 invalid_body once the body timeout has passed, and nothing
// is stored; the observer sees the 400, never a 499.
func TestBodyTimeout(t *testing.T) {
	store := memstore.New()
	observed := make(chan petstore.Observation, 1)
	srv := newServer(t, newHandler(t, store, petstore.WithBodyTimeout(100*time.Millisecond),
		petstore.WithObserver(func(_ context.Context, o petstore.Observation) { observed <- o })))

	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := `{"name":"Rex","categoryId":1}`
	half := body[:len(body)/2]
	fmt.Fprintf(conn, "POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
		testKey, len(body), half)
	// The rest never comes: the answer arrives when the body timeout passes.
	if err := conn.SetReadDeadline(time.Now().Add(30 * time.Second)); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to a stalled body: %v", err)
	}
	defer resp.Body.Close()
	var got httpapi.Error
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
		t.Fatalf("decoding the answer: %v", err)
	}
	if resp.StatusCode != http.StatusBadRequest || got.Code != httpapi.CodeInvalidBody {
		t.Errorf("answer %d %s %q, want 400 invalid_body", resp.StatusCode, got.Code, got.Message)
	}
	if o := <-observed; o.Status != http.StatusBadRequest || o.Code != httpapi.CodeInvalidBody {
		t.Errorf("observed %d %s, want 400 invalid_body", o.Status, o.Code)
	}
	if pets := snapshot(t, store); len(pets) != 0 {
		t.Errorf("store holds %v, want nothing", pets)
	}
}
