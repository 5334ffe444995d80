package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The victims of TestAttacks run in a process of their own, the test
// binary started again with victimProcessVar set, so that neither the
// attacking clients' goroutines nor their garbage collection share a
// scheduler with the requests that are timed.

// victimProcessVar names the variable that makes the test binary the
// victims' process; its value is a victimConfig in JSON.
const victimProcessVar = "PETSTORE_TEST_VICTIMS"

// TestMain runs the test binary as the victims' process when
// victimProcessVar is set, and runs the tests otherwise.
func TestMain(m *testing.M) {
	if cfg := os.Getenv(victimProcessVar); cfg != "" {
		os.Exit(victimProcess(cfg))
	}
	os.Exit(m.Run())
}

// The victims: each sends one list and one create every victimPeriod with
// a key of its own, as a well-behaved client does, and they start a
// victimPeriod/victims apart so that their requests do not queue behind
// one another. Five of them make 200 requests a second, so that a phase of
// three seconds holds 600 and its p99 is the sixth slowest, not the
// slowest.
const (
	victims      = 5
	victimPeriod = 50 * time.Millisecond
)

// victimConfig is what the victims' process is told.
type victimConfig struct {
	BaseURL string
	Keys    []string      // a victim for each key
	CAFile  string        // the CA to trust, in PEM, for an https BaseURL
	MaxRun  time.Duration // when to stop if standard input has not ended
}

// victimSample is one request of a victim: when it began (Unix time in
// nanoseconds, which the test compares with the times of its phases) and
// how long it took.
type victimSample struct {
	Start int64
	Took  time.Duration
}

func (s victimSample) end() int64 { return s.Start + int64(s.Took) }

// victimReport is what the victims' process writes when it stops.
type victimReport struct {
	Samples  []victimSample
	Failures []string       // any answer but 200 and 201, or a transport error
	Protos   map[string]int // the protocols of the answers
}

// victimProcess runs the victims of the config cfg from "ready" on its
// standard output until its standard input ends, then writes their
// victimReport in JSON, and returns the exit code.
func victimProcess(cfg string) int {
	var c victimConfig
	if err := json.Unmarshal([]byte(cfg), &c); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	tlsConfig := &tls.Config{}
	if c.CAFile != "" {
		b, err := os.ReadFile(c.CAFile)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		tlsConfig.RootCAs = x509.NewCertPool()
		tlsConfig.RootCAs.AppendCertsFromPEM(b)
	}
	// The victims' own garbage collection would add its pauses to
	// whichever phase it fell in: the process stops in minutes, and holds
	// far less than the limit meanwhile.
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(1 << 30)
	ctx, cancel := context.WithTimeout(context.Background(), c.MaxRun)
	defer cancel()
	go func() {
		io.Copy(io.Discard, os.Stdin)
		cancel()
	}()
	var (
		mu     sync.Mutex
		report = victimReport{Protos: map[string]int{}}
		wg     sync.WaitGroup
	)
	fmt.Println("ready")
	for i, key := range c.Keys {
		wg.Go(func() {
			client := &http.Client{Timeout: 30 * time.Second,
				Transport: &http.Transport{MaxIdleConnsPerHost: 1, TLSClientConfig: tlsConfig.Clone(), ForceAttemptHTTP2: true}}
			defer client.CloseIdleConnections()
			r := victim(ctx, client, c.BaseURL, key, i, time.Duration(i)*victimPeriod/time.Duration(len(c.Keys)))
			mu.Lock()
			defer mu.Unlock()
			report.Samples = append(report.Samples, r.Samples...)
			report.Failures = append(report.Failures, r.Failures...)
			for p, n := range r.Protos {
				report.Protos[p] += n
			}
		})
	}
	wg.Wait()
	if err := json.NewEncoder(os.Stdout).Encode(report); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// victim sends one list and one create every victimPeriod, after offset,
// with key through client, until ctx is done, and reports each request.
func victim(ctx context.Context, client *http.Client, baseURL, key string, n int, offset time.Duration) victimReport {
	r := victimReport{Protos: map[string]int{}}
	select {
	case <-ctx.Done():
		return r
	case <-time.After(offset):
	}
	tick := time.NewTicker(victimPeriod)
	defer tick.Stop()
	for i := 0; ; i++ {
		list, _ := http.NewRequest(http.MethodGet, baseURL+"/pets?limit=20", nil)
		create, _ := http.NewRequest(http.MethodPost, baseURL+"/pets", strings.NewReader(fmt.Sprintf(`{"name":"victim %d-%d","categoryId":1}`, n, i)))
		create.Header.Set("Content-Type", "application/json")
		for _, req := range []*http.Request{list, create} {
			req.Header.Set("Authorization", "Bearer "+key)
			start := time.Now()
			resp, err := client.Do(req)
			if err == nil {
				_, err = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			r.Samples = append(r.Samples, victimSample{Start: start.UnixNano(), Took: time.Since(start)})
			switch {
			case err != nil:
				r.Failures = append(r.Failures, fmt.Sprintf("%s %s: %v", req.Method, req.URL.Path, err))
			case resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusCreated:
				r.Failures = append(r.Failures, fmt.Sprintf("%s %s: %s", req.Method, req.URL.Path, resp.Status))
			}
			if err == nil {
				r.Protos[resp.Proto]++
			}
		}
		select {
		case <-ctx.Done():
			return r
		case <-tick.C:
		}
	}
}

// victimRun is the victims' process, started by startVictims.
type victimRun struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *bufio.Reader
	stderr *syncBuffer
}

// startVictims starts the victims' process against p, a victim for each
// key, trusting the CA in caFile unless it is "", and waits until it is
// ready.
func startVictims(t *testing.T, p *serverProcess, caFile string, keys []string) *victimRun {
	t.Helper()
	cfg, err := json.Marshal(victimConfig{BaseURL: p.baseURL, Keys: keys, CAFile: caFile, MaxRun: 2 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	v := &victimRun{cmd: exec.Command(os.Args[0]), stderr: &syncBuffer{}}
	v.cmd.Env = append(os.Environ(), victimProcessVar+"="+string(cfg))
	v.cmd.Stderr = v.stderr
	if v.stdin, err = v.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := v.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	v.stdout = bufio.NewReader(out)
	if err := v.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if v.cmd.ProcessState == nil {
			v.cmd.Process.Kill()
			v.cmd.Wait()
		}
	})
	if line, err := v.stdout.ReadString('\n'); line != "ready\n" {
		t.Fatalf("the victims' process said %q (%v); want ready; its stderr:\n%s", line, err, v.stderr)
	}
	return v
}

// stop ends the victims' process and returns its report.
func (v *victimRun) stop(t *testing.T) victimReport {
	t.Helper()
	v.stdin.Close()
	var r victimReport
	err := json.NewDecoder(v.stdout).Decode(&r)
	if werr := v.cmd.Wait(); err == nil {
		err = werr
	}
	if err != nil {
		t.Fatalf("the victims' process: %v; its stderr:\n%s", err, v.stderr)
	}
	return r
}

// p99 returns the 99th percentile of ds: the value that 1% of them exceed.
func p99(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)*99/100]
}

// spread returns the median, the p99 and the maximum of ds, for the log.
func spread(ds []time.Duration) string {
	if len(ds) == 0 {
		return "none"
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return fmt.Sprintf("p50 %v, p99 %v, max %v", s[len(s)/2].Round(time.Microsecond), p99(s).Round(time.Microsecond), s[len(s)-1].Round(time.Microsecond))
}

// p99Floor is the least quiet p99 that the victims' p99 under attack is
// held to twice of: 1 ms, the resolution of a p99 of a phase of three
// seconds on this machine. With no attack at all, the victims' p99 of
// fifteen windows of three seconds in a row, on an otherwise idle shared
// machine of two cores, ranged from 0.62 to 1.60 ms, and a window's p99
// was up to 1.95 times that of the two windows around it: a p99 this small
// moves by about a millisecond with where the scheduler's hiccups fall,
// whatever the server does. A floor any higher would let a real doubling
// through.
const p99Floor = time.Millisecond

// The phases of each case of TestAttacks: the victims run warmUp
// unmeasured, then quietFor with no attack, then loudFor under attack, and
// after the attack has ended and every connection it opened has been
// checked, quietFor with no attack again. Their p99 under attack is
// compared with their p99 in both quiet phases together, so that what
// drifts over the run (the store grows, the machine's other load comes and
// goes) weighs on both sides.
const (
	warmUp   = time.Second
	quietFor = 3 * time.Second
	loudFor  = 6 * time.Second
)

// holdBound is how long an attacking connection may stay open before the
// server closes it: a connection that is not read from is closed within
// one and a half writeGrace of its last write (see pace), and the server
// writes to it at once; two seconds more for scheduling.
const holdBound = writeGrace*3/2 + 2*time.Second

// mark is a moment of a phase and the CPU time the processes had used by
// then.
type mark struct {
	at                        time.Time
	server, victims, attacker time.Duration
}

// markNow returns the mark of now for the server p and the victims v; the
// attacker is this process.
func markNow(t *testing.T, p *serverProcess, v *victimRun) mark {
	return mark{at: time.Now(), server: cpuOf(t, p.cmd.Process.Pid), victims: cpuOf(t, v.cmd.Process.Pid), attacker: cpuOf(t, os.Getpid())}
}

// cores returns how many cores each process used on average from a to b.
func cores(a, b mark) (server, victims, attacker float64) {
	d := b.at.Sub(a.at).Seconds()
	return (b.server - a.server).Seconds() / d, (b.victims - a.victims).Seconds() / d, (b.attacker - a.attacker).Seconds() / d
}

// cpuOf returns the CPU time, user and system, that the process pid has
// used, from /proc/PID/stat (in clock ticks of 1/100 s, Linux's USER_HZ).
func cpuOf(t *testing.T, pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Error(err)
		return 0
	}
	// The fields after the command's name, which ends with the last ')':
	// state is field 3, utime 14 and stime 15.
	i := strings.LastIndexByte(string(b), ')')
	f := strings.Fields(string(b[i+1:]))
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		t.Errorf("/proc/%d/stat: %q", pid, b)
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// quietIn returns the latencies of the samples that began and ended
// between a and b; loudIn those that began between them.
func quietIn(ss []victimSample, a, b time.Time) []time.Duration {
	var ds []time.Duration
	for _, s := range ss {
		if s.Start >= a.UnixNano() && s.end() <= b.UnixNano() {
			ds = append(ds, s.Took)
		}
	}
	return ds
}

func loudIn(ss []victimSample, a, b time.Time) []time.Duration {
	var ds []time.Duration
	for _, s := range ss {
		if s.Start >= a.UnixNano() && s.Start < b.UnixNano() {
			ds = append(ds, s.Took)
		}
	}
	return ds
}

// attackTally counts what an attack did, for the log and its checks; it is
// safe for concurrent use.
type attackTally struct {
	mu       sync.Mutex
	opened   int            // connections or streams
	answers  map[string]int // by status
	errs     map[string]int // transport errors, by kind
	longest  time.Duration  // the longest a connection or stream took to be closed or answered
	overdue  int            // not closed or answered within holdBound
	overdue1 string         // the first of them
}

func (a *attackTally) add(f func(a *attackTally)) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.answers == nil {
		a.answers, a.errs = map[string]int{}, map[string]int{}
	}
	f(a)
}

func (a *attackTally) String() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var s []string
	for _, k := range slices.Sorted(maps.Keys(a.answers)) {
		s = append(s, fmt.Sprintf("%s: %d", k, a.answers[k]))
	}
	for _, k := range slices.Sorted(maps.Keys(a.errs)) {
		s = append(s, fmt.Sprintf("%s: %d", k, a.errs[k]))
	}
	return fmt.Sprintf("%d opened (%s)", a.opened, strings.Join(s, ", "))
}

// connAttack keeps n connections to p going until ctx is done: each sends
// head and then body a byte a second. When one ends, its slot opens the
// next, no sooner than a second after the last, as an attacker keeps its
// attack up. With read, each slot reads what the server answers until the
// server closes the connection, which tells when it did; without, it never
// reads, as a client does that wants the server to hold its answer, and
// checks at holdBound after it opened the connection that the server has
// closed it. A connection that the server has not closed within holdBound
// is an error. It returns when every connection has ended.
func connAttack(ctx context.Context, t *testing.T, p *serverProcess, tally *attackTally, n int, head, body string, read bool) {
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			staggered(ctx, i, n)
			for ctx.Err() == nil {
				opened := time.Now()
				d := net.Dialer{Control: smallReceiveBuffer}
				conn, err := d.DialContext(ctx, "tcp", p.addr)
				if err != nil {
					if ctx.Err() == nil {
						t.Error(err)
					}
					return
				}
				tally.add(func(a *attackTally) { a.opened++ })
				done := make(chan struct{})
				if _, err := io.WriteString(conn, head); err == nil && body != "" {
					go dripTo(ctx, done, conn, body)
				}
				var status string
				closed := false
				if read {
					status, closed = readToClose(conn, opened.Add(holdBound))
				} else {
					time.Sleep(time.Until(opened.Add(holdBound)))
					closed = closedBy(conn, time.Now().Add(2*time.Second))
				}
				took := time.Since(opened)
				close(done)
				conn.Close()
				tally.add(func(a *attackTally) {
					if status != "" {
						a.answers[status]++
					}
					if !closed {
						a.overdue++
						a.overdue1 = fmt.Sprintf("a connection was still open %v after it was opened", took.Round(time.Millisecond))
					} else if read {
						a.longest = max(a.longest, took)
					}
				})
				select {
				case <-ctx.Done():
				case <-time.After(time.Until(opened.Add(time.Second))):
				}
			}
		})
	}
	wg.Wait()
}

// staggered waits the i-th of n slots' share of a second, or until ctx is
// done: the slots of an attack that paces each of them to a second start
// spread over that second, so that the attack is as steady as its
// description, rather than a burst of all of them every second.
func staggered(ctx context.Context, i, n int) {
	select {
	case <-ctx.Done():
	case <-time.After(time.Duration(i) * time.Second / time.Duration(n)):
	}
}

// dripTo writes body to conn a byte a second until it has all gone, or ctx
// or done is done.
func dripTo(ctx context.Context, done <-chan struct{}, conn net.Conn, body string) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for i := range len(body) {
		select {
		case <-ctx.Done():
			return
		case <-done:
			return
		case <-tick.C:
		}
		if _, err := conn.Write([]byte{body[i]}); err != nil {
			return
		}
	}
}

// readToClose reads what the server sends on conn until it closes the
// connection or deadline passes. It returns the status of the answer (""
// when there was none) and whether the server closed the connection.
func readToClose(conn net.Conn, deadline time.Time) (status string, closed bool) {
	conn.SetReadDeadline(deadline)
	var first [12]byte // "HTTP/1.1 429"
	n, err := io.ReadFull(conn, first[:])
	if n == len(first) {
		status = string(first[9:])
		_, err = io.Copy(io.Discard, conn)
	}
	var ne net.Error
	return status, !(errors.As(err, &ne) && ne.Timeout())
}

// closedBy reports whether the server has closed conn: reading what it
// sent ends before deadline.
func closedBy(conn net.Conn, deadline time.Time) bool {
	conn.SetReadDeadline(deadline)
	_, err := io.Copy(io.Discard, conn)
	var ne net.Error
	return !(errors.As(err, &ne) && ne.Timeout())
}

// floodAttack sends requests on n connections to p until ctx is done, one
// request in flight on each, the next as soon as the last is answered:
// lists with the greatest page from a cursor, and creates each with an
// Idempotency-Key of its own of 240 characters and more. Requests are
// written from bytes and answers read with http.ReadResponse, so that the
// flood costs this process as little as it can and leaves the cores to
// the server.
func floodAttack(ctx context.Context, t *testing.T, p *serverProcess, tally *attackTally, n int, key string) {
	const body = `{"name":"flood","categoryId":1}`
	long := strings.Repeat("k", 240)
	var wg sync.WaitGroup
	for g := range n {
		wg.Go(func() {
			var (
				conn net.Conn
				br   *bufio.Reader
				buf  []byte
			)
			defer func() {
				if conn != nil {
					conn.Close()
				}
			}()
			for i := 0; ctx.Err() == nil; i++ {
				if conn == nil {
					var err error
					if conn, err = (&net.Dialer{}).DialContext(ctx, "tcp", p.addr); err != nil {
						if ctx.Err() == nil {
							t.Error(err)
						}
						return
					}
					br = bufio.NewReader(conn)
					tally.add(func(a *attackTally) { a.opened++ })
				}
				if i%2 == 0 {
					buf = fmt.Appendf(buf[:0], "GET %s?limit=100&cursor=zzzz HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n\r\n", p.path, key)
				} else {
					buf = fmt.Appendf(buf[:0], "POST %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n"+
						"Idempotency-Key: %s-%d-%d\r\nContent-Length: %d\r\n\r\n%s", p.path, key, long, g, i, len(body), body)
				}
				conn.SetDeadline(time.Now().Add(10 * time.Second))
				_, err := conn.Write(buf)
				var resp *http.Response
				if err == nil {
					resp, err = http.ReadResponse(br, nil)
				}
				if err == nil {
					_, err = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					tally.add(func(a *attackTally) { a.answers[strconv.Itoa(resp.StatusCode)]++ })
					if resp.Close {
						conn.Close()
						conn = nil
					}
				}
				if err != nil {
					tally.add(func(a *attackTally) { a.errs["transport error"]++ })
					conn.Close()
					conn = nil
				}
			}
		})
	}
	wg.Wait()
}

// h2Attack opens conns HTTP/2 connections to p, trusting ca, and on each
// keeps streams POST streams going until ctx is done, each declaring body
// and sending it a byte a second. When a stream ends, its slot opens the
// next, no sooner than a second after the last; when the server closes a
// connection, the next stream opens a new one. A stream that the server
// has not answered within holdBound is an error. It returns when every
// stream has ended.
func h2Attack(ctx context.Context, t *testing.T, p *serverProcess, ca *testCA, tally *attackTally, conns, streams int, key, body string) {
	var wg sync.WaitGroup
	var slot atomic.Int64
	for range conns {
		// A transport per connection, holding to one connection.
		client := ca.client()
		tr := client.Transport.(*http.Transport)
		tr.MaxConnsPerHost = 1
		tr.HTTP2 = &http.HTTP2Config{StrictMaxConcurrentRequests: true}
		tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			tally.add(func(a *attackTally) { a.errs["connections dialled"]++ })
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		}
		client.Timeout = 0
		defer tr.CloseIdleConnections()
		for range streams {
			wg.Go(func() {
				staggered(ctx, int(slot.Add(1))-1, conns*streams)
				for ctx.Err() == nil {
					opened := time.Now()
					rctx, cancel := context.WithTimeout(context.Background(), holdBound)
					req, _ := http.NewRequestWithContext(rctx, http.MethodPost, p.baseURL+"/pets", &drippingBody{rest: body, stop: ctx.Done(), closed: make(chan struct{})})
					req.ContentLength = int64(len(body))
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("Authorization", "Bearer "+key)
					tally.add(func(a *attackTally) { a.opened++ })
					resp, err := client.Do(req)
					if err == nil {
						io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
					}
					took := time.Since(opened)
					overdue := rctx.Err() != nil
					cancel()
					tally.add(func(a *attackTally) {
						switch {
						case overdue:
							a.overdue++
							a.overdue1 = fmt.Sprintf("a stream was not answered %v after it was opened: %v", took.Round(time.Millisecond), err)
						case err != nil:
							a.errs["transport error"]++
						case resp.ProtoMajor != 2:
							a.errs["answered over "+resp.Proto]++
						default:
							a.answers[strconv.Itoa(resp.StatusCode)]++
							a.longest = max(a.longest, took)
						}
					})
					select {
					case <-ctx.Done():
					case <-time.After(time.Until(opened.Add(time.Second))):
					}
				}
			})
		}
	}
	wg.Wait()
}

// drippingBody is a request body that gives rest a byte a second; once
// stop is closed it gives no more, and never ends, until it is closed.
type drippingBody struct {
	rest   string
	stop   <-chan struct{}
	once   sync.Once
	closed chan struct{}
}

func (b *drippingBody) Read(p []byte) (int, error) {
	if b.rest == "" {
		return 0, io.EOF
	}
	timer := time.NewTimer(time.Second)
	defer timer.Stop()
	select {
	case <-b.closed:
		return 0, io.ErrClosedPipe
	case <-b.stop:
		<-b.closed
		return 0, io.ErrClosedPipe
	case <-timer.C:
	}
	p[0], b.rest = b.rest[0], b.rest[1:]
	return 1, nil
}

func (b *drippingBody) Close() error {
	b.once.Do(func() { close(b.closed) })
	return nil
}

// TestAttacks runs each attack of the hostile clients against the server
// on its defaults while victims, five clients each with a key of its own,
// send one list and one create every 50 ms each. The attack is kept up for
// loudFor, each connection or stream that the server ends being replaced
// by a new one, and the victims' p99 under it is compared with their p99
// with no attack, measured just before and just after it on the same
// server: the victims see no error, and their p99 under attack is at most
// twice their p99 with no attack (or p99Floor). Every attacking connection
// (every stream, over HTTP/2) is closed or answered by the server within
// holdBound, a few seconds, whether it has a key or not.
func TestAttacks(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping a test that builds and runs the server as a process in -short mode")
	}
	bin := buildServer(t)
	const attacker = "attacker-key-0123456789"
	keys := []string{"mallory:" + attacker}
	var victimKeys []string
	for i := range victims {
		victimKeys = append(victimKeys, fmt.Sprintf("victim-key-%d-0123456789", i))
		keys = append(keys, fmt.Sprintf("victor%d:%s", i, victimKeys[i]))
	}
	const drip = `{"name":"drip","categoryId":1}`
	dripHead := func(p *serverProcess) string {
		return fmt.Sprintf("POST %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", p.path, attacker, len(drip))
	}
	cases := []struct {
		name string
		args []string
		tls  bool // the server serves HTTPS, and HTTP/2
		// attack keeps the attack up until ctx is done, and returns when
		// every connection it opened has ended; ca is the CA of the
		// server's certificate, with tls.
		attack func(ctx context.Context, t *testing.T, p *serverProcess, ca *testCA, tally *attackTally)
	}{{
		name: "docs bundle never read, no key, 60 connections",
		attack: func(ctx context.Context, t *testing.T, p *serverProcess, _ *testCA, tally *attackTally) {
			head := "GET " + strings.TrimSuffix(p.path, "/pets") + "/docs/swagger-ui-bundle.js HTTP/1.1\r\nHost: x\r\nAccept-Encoding: identity\r\n\r\n"
			connAttack(ctx, t, p, tally, 60, head, "", false)
		},
	}, {
		name: "bodies dripping at a byte a second, one key, 100 connections",
		attack: func(ctx context.Context, t *testing.T, p *serverProcess, _ *testCA, tally *attackTally) {
			connAttack(ctx, t, p, tally, 100, dripHead(p), drip, true)
		},
	}, {
		name: "one key on most connections, -max-conns 64, 100 connections",
		args: []string{"-max-conns", "64"},
		attack: func(ctx context.Context, t *testing.T, p *serverProcess, _ *testCA, tally *attackTally) {
			connAttack(ctx, t, p, tally, 100, dripHead(p), drip, true)
		},
	}, {
		name: "deep pages and unique Idempotency-Keys, one key, 4 requests in flight",
		attack: func(ctx context.Context, t *testing.T, p *serverProcess, _ *testCA, tally *attackTally) {
			floodAttack(ctx, t, p, tally, 4, attacker)
		},
	}, {
		name: "HTTP/2, 32 connections x 32 streams dripping bodies at a byte a second, one key",
		tls:  true,
		attack: func(ctx context.Context, t *testing.T, p *serverProcess, ca *testCA, tally *attackTally) {
			h2Attack(ctx, t, p, ca, tally, 32, 32, attacker, drip)
		},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"-store", "memory"}, c.args...)
			var ca *testCA
			caFile := ""
			if c.tls {
				ca = newTestCA(t)
				cert, key := pairFiles(t, ca.valid(t))
				args = append(args, "-tls-cert", cert, "-tls-key", key)
				caFile = filepath.Join(t.TempDir(), "ca.pem")
				if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.cert.Raw}), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			p := startServer(t, bin, strings.Join(keys, ","), defaultBudgets, args...)
			v := startVictims(t, p, caFile, victimKeys)
			time.Sleep(warmUp)
			m0 := markNow(t, p, v)
			time.Sleep(quietFor)
			m1 := markNow(t, p, v)
			ctx, cancel := context.WithTimeout(t.Context(), loudFor)
			defer cancel()
			var tally attackTally
			attacked := make(chan struct{})
			go func() {
				defer close(attacked)
				c.attack(ctx, t, p, ca, &tally)
			}()
			<-ctx.Done()
			m2 := markNow(t, p, v)
			<-attacked
			m3 := markNow(t, p, v)
			time.Sleep(quietFor)
			m4 := markNow(t, p, v)
			r := v.stop(t)

			before, after := quietIn(r.Samples, m0.at, m1.at), quietIn(r.Samples, m3.at, m4.at)
			quiet, loud := append(before, after...), loudIn(r.Samples, m1.at, m2.at)
			q, l := p99(quiet), p99(loud)
			t.Logf("victims' p99: %v with no attack (%d requests; %v before the attack, %v after), %v under attack (%d requests): %.2f times",
				q, len(quiet), p99(before), p99(after), l, len(loud), float64(l)/float64(q))
			sq, vq, aq := cores(m0, m1)
			sl, vl, al := cores(m1, m2)
			t.Logf("victims with no attack: %s; under attack: %s", spread(quiet), spread(loud))
			t.Logf("cores used with no attack and under it: the server %.2f and %.2f, the victims %.2f and %.2f, this process (the attackers) %.2f and %.2f; victims' answers %v",
				sq, sl, vq, vl, aq, al, r.Protos)
			t.Logf("attacking connections or streams: %s; the longest to be closed or answered took %v, and all had ended %v after the attack stopped",
				&tally, tally.longest.Round(time.Millisecond), m3.at.Sub(m2.at).Round(time.Millisecond))

			if len(r.Failures) > 0 {
				t.Errorf("the victims failed %d times; the first: %s", len(r.Failures), r.Failures[0])
			}
			if min(len(before), len(after), len(loud)/2) < 400 {
				t.Errorf("the victims sent %d requests before the attack, %d during it and %d after; want hundreds in each, for a p99", len(before), len(loud), len(after))
			}
			if limit := 2 * max(q, p99Floor); l > limit {
				t.Errorf("the victims' p99 under attack is %v, %.2f times their p99 with no attack (%v); want at most %v", l, float64(l)/float64(q), q, limit)
			}
			if tally.overdue > 0 {
				t.Errorf("%d attacking connections or streams were not closed or answered within %v; %s", tally.overdue, holdBound, tally.overdue1)
			}
			if tally.opened == 0 {
				t.Errorf("the attack opened no connection")
			}
		})
	}
}
