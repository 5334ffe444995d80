//go:build linux

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
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestAttacks measures what attacks do to the server alone, as if its
// clients ran on other machines. The server runs on a CPU of its own (see
// splitCPUs). The victims and the attackers run on the other CPUs, each in
// a process of their own, so that none shares a scheduler or a garbage
// collector with another: this package's test binary built without the
// race detector (see buildClients), started with victimProcessVar or
// attackerProcessVar set. The attackers run under Linux's SCHED_IDLE,
// which gives way at once to any other thread that wakes on their CPU, so
// that the victims' requests do not wait for the attackers' time slices,
// while the attackers still have all the CPU that the victims leave.

// The variables that make the test binary the victims' or the attackers'
// process; the value is a victimConfig or an attackConfig in JSON.
const (
	victimProcessVar   = "PETSTORE_TEST_VICTIMS"
	attackerProcessVar = "PETSTORE_TEST_ATTACKER"
)

// TestMain runs the test binary as the victims' or the attackers' process
// when their variable is set, and runs the tests otherwise.
func TestMain(m *testing.M) {
	if cfg := os.Getenv(attackerProcessVar); cfg != "" {
		os.Exit(attackerProcess(cfg))
	}
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
		roots, err := caPool(c.CAFile)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		tlsConfig.RootCAs = roots
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

// clients is a process of the test binary that runs clients, the victims
// or the attackers.
type clients struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *bufio.Reader
	stderr *syncBuffer
}

// startClients starts the test binary bin with envVar set to cfg in JSON,
// which makes it run the clients that envVar names, and kills the process
// at the end of the test if it still runs.
func startClients(t *testing.T, bin, envVar string, cfg any) clients {
	t.Helper()
	js, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c := clients{cmd: exec.Command(bin), stderr: &syncBuffer{}}
	c.cmd.Env = append(os.Environ(), envVar+"="+string(js))
	c.cmd.Stderr = c.stderr
	if c.stdin, err = c.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := c.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	c.stdout = bufio.NewReader(out)
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if c.cmd.ProcessState == nil {
			c.cmd.Process.Kill()
			c.cmd.Wait()
		}
	})
	return c
}

// victimRun is the victims' process, started by startVictims.
type victimRun struct{ clients }

// startVictims starts the victims' process, the test binary bin, against
// p, a victim for each key, trusting the CA in caFile unless it is "", and
// waits until it is ready.
func startVictims(t *testing.T, bin string, p *serverProcess, caFile string, keys []string) *victimRun {
	t.Helper()
	v := &victimRun{startClients(t, bin, victimProcessVar,
		victimConfig{BaseURL: p.baseURL, Keys: keys, CAFile: caFile, MaxRun: 2 * time.Minute})}
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
// held to twice of: 1 ms, the resolution of a p99 of a few seconds on this
// machine. With no attack at all, the server alone on its CPU as in
// TestAttacks, the victims' p99 of fifteen windows of three seconds in a
// row ranged from 0.56 to 1.63 ms, and one window's p99 was 2.5 times that
// of the two windows around it: a p99 this small moves by about a
// millisecond with where the scheduler's hiccups fall, whatever the server
// does. A floor any higher would let a real doubling through.
const p99Floor = time.Millisecond

// strictP99Var names the variable that, set to 1, makes TestAttacks hold
// the victims' p99 under attack to twice their quiet p99 (or p99Floor), the
// figure BENCHMARKS.md reports. Without it, as in CI, where other packages'
// tests run at the same time on the same cores, the test holds it to twice
// max(quiet p99, p99Alarm): a latency target is a measurement, run on a
// quiet machine, and the test keeps an alarm against a server that lets
// one caller stall another.
const strictP99Var = "PETSTORE_TEST_STRICT_P99"

// p99Alarm is the floor of the p99 check when strictP99Var is not set. A
// server that lets one caller stall another stalls it for seconds (a body
// or write deadline); a CI run with every module's tests on two cores has
// put the victims' p99 at 50 ms under attack with a server that did not.
const p99Alarm = 100 * time.Millisecond

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
// server closes it, and an attacking HTTP/2 stream wait for its answer: a
// connection that is not read from is closed within one and a half
// writeGrace of its last write (see pace), and the server writes to it at
// once; two seconds more for scheduling. A body that drips is cut off a
// second after it takes its place (see minBodyRate), far within it.
const holdBound = writeGrace*3/2 + 2*time.Second

// mark is a moment of a phase and the CPU time the server and the victims
// had used by then.
type mark struct {
	at              time.Time
	server, victims time.Duration
}

// markNow returns the mark of now for the server p and the victims v.
func markNow(t *testing.T, p *serverProcess, v *victimRun) mark {
	return mark{at: time.Now(), server: cpuOf(t, p.cmd.Process.Pid), victims: cpuOf(t, v.cmd.Process.Pid)}
}

// cores returns how many cores the server and the victims used on average
// from a to b.
func cores(a, b mark) (server, victims float64) {
	d := b.at.Sub(a.at).Seconds()
	return (b.server - a.server).Seconds() / d, (b.victims - a.victims).Seconds() / d
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

// buildClients builds this package's tests without the race detector into
// a temporary directory, for the victims' and the attackers' processes,
// and returns the executable's path. Under the race detector (CI runs the
// tests with it), the attackers' clients take several times the CPU and
// the victims' own work is slower: the victims' p99 under the flood of
// deep pages was 4.2 to 5.2 ms so, 2.9 to 5.6 times their quiet p99,
// against 0.9 to 1.2 ms without it.
func buildClients(t *testing.T) string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("building the clients needs the go command on PATH: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "clients.test")
	if out, err := exec.Command(gobin, "test", "-c", "-race=false", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go test -c: %v\n%s", err, out)
	}
	return bin
}

// splitCPUs gives the server a CPU of its own: it pins every thread of this
// process, and so the processes it starts, to the CPUs it may use but the
// first, until the test ends, and returns a function that starts the
// server on that first CPU alone, and a line for the log. On two shared
// cores, a server whose threads share their CPUs with its clients', or
// outnumber them, has a request wait a scheduler's time slice, a few
// milliseconds, whenever the thread that would serve it is off its CPU:
// under the flood of deep pages, the victims' p99 was 2.8 to 3.7 ms, 3.8
// to 4.7 times their quiet p99, with the server and its clients on both
// cores, and stayed over 3 ms with the attackers at nice 19, the server at
// nice -19, the server's GOGC at 1000 or its GOMAXPROCS at 1, or the
// server alone on one CPU with a GOMAXPROCS of 2; with the server alone on
// one CPU, it was 0.9 to 1.4 ms. The server's runtime sizes its
// GOMAXPROCS to that one CPU.
func splitCPUs(t *testing.T) (start func(t *testing.T, bin, keys string, env []string, args ...string) *serverProcess, cpus string) {
	t.Helper()
	var all, server, clients unix.CPUSet
	if err := unix.SchedGetaffinity(0, &all); err != nil {
		t.Fatal(err)
	}
	if all.Count() < 2 {
		t.Skipf("skipping: TestAttacks needs two CPUs, one for the server alone and one for its clients; this process may use %d", all.Count())
	}
	clients = all
	first := 0
	for !all.IsSet(first) {
		first++
	}
	server.Set(first)
	clients.Clear(first)
	setThreads(t, &clients)
	t.Cleanup(func() { setThreads(t, &all) })
	start = func(t *testing.T, bin, keys string, env []string, args ...string) *serverProcess {
		t.Helper()
		// A process starts with the CPUs of the thread that started it.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := unix.SchedSetaffinity(0, &server); err != nil {
			t.Fatal(err)
		}
		defer unix.SchedSetaffinity(0, &clients)
		p := startServer(t, bin, keys, env, args...)
		if got := cpusAllowed(t, p.cmd.Process.Pid); got != strconv.Itoa(first) {
			t.Fatalf("the server may run on CPUs %s; want %d alone", got, first)
		}
		return p
	}
	return start, fmt.Sprintf("the server on CPU %d, the clients on CPUs %s", first, cpusAllowed(t, os.Getpid()))
}

// setThreads sets the CPUs of every thread of this process to set. A
// thread started meanwhile gets the CPUs of the thread that started it:
// the second pass sets those that started from a thread not yet set.
func setThreads(t *testing.T, set *unix.CPUSet) {
	t.Helper()
	for range 2 {
		tasks, err := os.ReadDir("/proc/self/task")
		if err != nil {
			t.Fatal(err)
		}
		for _, task := range tasks {
			if tid, err := strconv.Atoi(task.Name()); err == nil {
				if err := unix.SchedSetaffinity(tid, set); err != nil && !errors.Is(err, unix.ESRCH) {
					t.Fatalf("setting the CPUs of thread %d: %v", tid, err)
				}
			}
		}
	}
}

// cpusAllowed returns the CPUs that the process pid may run on, as
// /proc/PID/status lists them.
func cpusAllowed(t *testing.T, pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
			return strings.TrimSpace(v)
		}
	}
	t.Fatalf("no Cpus_allowed_list in /proc/%d/status", pid)
	return ""
}

// attackTally counts what an attack did, for the log and the checks; it is
// safe for concurrent use, and the attackers' process reports it in JSON.
type attackTally struct {
	mu        sync.Mutex
	Opened    int            // connections or streams
	Answers   map[string]int // by status
	Errs      map[string]int // transport errors, and other counts, by kind
	Longest   time.Duration  // the longest a connection or stream took to be closed or answered
	Overdue   int            // not closed or answered within holdBound
	Overdue1  string         // the first of them
	Failures  []string       // what kept the attack from running as it should
	Connected int            // HTTP/2 connections dialled
}

func (a *attackTally) add(f func(a *attackTally)) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.Answers == nil {
		a.Answers, a.Errs = map[string]int{}, map[string]int{}
	}
	f(a)
}

// fail records what kept the attack from running as it should.
func (a *attackTally) fail(err error) {
	a.add(func(a *attackTally) { a.Failures = append(a.Failures, err.Error()) })
}

// dialFailed counts an attacking connection that could not be opened. It
// is no failure of the test: an attacker kept out serves nobody, and under
// CI, where the attackers run at idle priority beside other packages'
// tests, a dial may time out on the attacker's side.
func (a *attackTally) dialFailed(err error) {
	a.add(func(a *attackTally) { a.Errs["dial: "+err.Error()]++ })
}

func (a *attackTally) String() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var s []string
	for _, k := range slices.Sorted(maps.Keys(a.Answers)) {
		s = append(s, fmt.Sprintf("%s: %d", k, a.Answers[k]))
	}
	for _, k := range slices.Sorted(maps.Keys(a.Errs)) {
		s = append(s, fmt.Sprintf("%s: %d", k, a.Errs[k]))
	}
	if a.Connected > 0 {
		s = append(s, fmt.Sprintf("over %d connections", a.Connected))
	}
	return fmt.Sprintf("%d opened (%s)", a.Opened, strings.Join(s, ", "))
}

// attackConfig is what the attackers' process is told: which attack to
// keep up against which server, and for how long.
type attackConfig struct {
	Kind    string // "docs", "drip", "flood" or "h2"
	Conns   int    // connections
	Streams int    // streams on each connection, for h2
	Key     string // the attacker's API key
	Addr    string // the server's host:port
	BaseURL string
	Path    string // the collection's
	CAFile  string // the CA to trust, in PEM, for h2
	For     time.Duration
}

// dripBody is the body that the dripping attacks send a byte a second.
const dripBody = `{"name":"drip","categoryId":1}`

// run keeps the attack of c up against p until ctx is done, and returns
// when every connection and stream it opened has ended.
func (c attackConfig) run(ctx context.Context, p *serverProcess, tally *attackTally) {
	switch c.Kind {
	case "docs":
		head := "GET " + strings.TrimSuffix(p.path, "/pets") + "/docs/swagger-ui-bundle.js HTTP/1.1\r\nHost: x\r\nAccept-Encoding: identity\r\n\r\n"
		connAttack(ctx, p, tally, c.Conns, head, "", false)
	case "drip":
		head := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n",
			p.path, c.Key, len(dripBody))
		connAttack(ctx, p, tally, c.Conns, head, dripBody, true)
	case "flood":
		floodAttack(ctx, p, tally, c.Conns, c.Key)
	case "h2":
		roots, err := caPool(c.CAFile)
		if err != nil {
			tally.fail(err)
			return
		}
		h2Attack(ctx, p, roots, tally, c.Conns, c.Streams, c.Key, dripBody)
	default:
		tally.fail(fmt.Errorf("no attack %q", c.Kind))
	}
}

// caPool returns a pool of the certificates in the PEM file name.
func caPool(name string) (*x509.CertPool, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("no certificate in %s", name)
	}
	return pool, nil
}

// attackerProcess runs the attack of the config cfg at the lowest
// priority, Linux's SCHED_IDLE: it says "started" on its standard output
// as the attack starts, "stopped" when its time is up, and then, once
// every connection has ended, its attackTally in JSON. It returns the exit
// code.
func attackerProcess(cfg string) int {
	// A thread gets the policy of the thread that starts it: the threads
	// of the runtime so far are all set, and those to come follow them.
	for range 2 {
		tasks, err := os.ReadDir("/proc/self/task")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		for _, task := range tasks {
			if tid, err := strconv.Atoi(task.Name()); err == nil {
				if err := unix.SchedSetAttr(tid, &unix.SchedAttr{Policy: unix.SCHED_IDLE}, 0); err != nil && !errors.Is(err, unix.ESRCH) {
					fmt.Fprintf(os.Stderr, "setting SCHED_IDLE on thread %d: %v\n", tid, err)
					return 2
				}
			}
		}
	}
	var c attackConfig
	if err := json.Unmarshal([]byte(cfg), &c); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	p := &serverProcess{addr: c.Addr, baseURL: c.BaseURL, path: c.Path}
	var tally attackTally
	ctx, cancel := context.WithTimeout(context.Background(), c.For)
	defer cancel()
	done := make(chan struct{})
	fmt.Println("started")
	go func() {
		defer close(done)
		c.run(ctx, p, &tally)
	}()
	<-ctx.Done()
	fmt.Println("stopped")
	<-done
	if err := json.NewEncoder(os.Stdout).Encode(&tally); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// attackRun is the attackers' process, started by startAttack.
type attackRun struct{ clients }

// startAttack starts the attackers' process, the test binary bin, with c
// and waits until it says it has started.
func startAttack(t *testing.T, bin string, c attackConfig) *attackRun {
	t.Helper()
	a := &attackRun{startClients(t, bin, attackerProcessVar, c)}
	a.expect(t, "started")
	return a
}

// expect reads the next line of the attackers' process and fails the
// test unless it is want.
func (a *attackRun) expect(t *testing.T, want string) {
	t.Helper()
	if line, err := a.stdout.ReadString('\n'); line != want+"\n" {
		t.Fatalf("the attackers' process said %q (%v); want %s; its stderr:\n%s", line, err, want, a.stderr)
	}
}

// finish waits for the attackers' process to end, and returns its tally
// and the CPU time it used.
func (a *attackRun) finish(t *testing.T) (*attackTally, time.Duration) {
	t.Helper()
	var tally attackTally
	err := json.NewDecoder(a.stdout).Decode(&tally)
	if werr := a.cmd.Wait(); err == nil {
		err = werr
	}
	if err != nil {
		t.Fatalf("the attackers' process: %v; its stderr:\n%s", err, a.stderr)
	}
	return &tally, a.cmd.ProcessState.UserTime() + a.cmd.ProcessState.SystemTime()
}

// connAttack keeps n connections to p going until ctx is done: each sends
// head and then body a byte a second. When one ends, its slot opens the
// next, no sooner than a second after the last, as an attacker keeps its
// attack up. With read, each slot reads what the server answers until the
// server closes the connection, which tells when it did; without, it never
// reads, as a client does that wants the server to hold its answer, and
// checks at holdBound after it opened the connection that the server has
// closed it. A connection that the server has not closed within holdBound
// is overdue. It returns when every connection has ended.
func connAttack(ctx context.Context, p *serverProcess, tally *attackTally, n int, head, body string, read bool) {
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
						tally.dialFailed(err)
					}
					return
				}
				tally.add(func(a *attackTally) { a.Opened++ })
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
						a.Answers[status]++
					}
					switch {
					case !closed:
						if a.Overdue++; a.Overdue == 1 {
							a.Overdue1 = fmt.Sprintf("a connection was still open %v after it was opened", took.Round(time.Millisecond))
						}
					case read:
						a.Longest = max(a.Longest, took)
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
func floodAttack(ctx context.Context, p *serverProcess, tally *attackTally, n int, key string) {
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
							tally.dialFailed(err)
						}
						return
					}
					br = bufio.NewReader(conn)
					tally.add(func(a *attackTally) { a.Opened++ })
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
					tally.add(func(a *attackTally) { a.Answers[strconv.Itoa(resp.StatusCode)]++ })
					if resp.Close {
						conn.Close()
						conn = nil
					}
				}
				if err != nil {
					tally.add(func(a *attackTally) { a.Errs["transport error"]++ })
					conn.Close()
					conn = nil
				}
			}
		})
	}
	wg.Wait()
}

// h2Attack opens conns HTTP/2 connections to p, trusting roots, and on each
// keeps streams POST streams going until ctx is done, each declaring body
// and sending it a byte a second. When a stream ends, its slot opens the
// next, no sooner than a second after the last; when the server closes a
// connection, the next stream opens a new one. A stream that the server
// has not answered within holdBound is overdue. It returns when every
// stream has ended.
func h2Attack(ctx context.Context, p *serverProcess, roots *x509.CertPool, tally *attackTally, conns, streams int, key, body string) {
	var wg sync.WaitGroup
	var slot atomic.Int64
	for range conns {
		// A transport per connection, holding to one connection.
		tr := &http.Transport{
			TLSClientConfig:   &tls.Config{RootCAs: roots},
			ForceAttemptHTTP2: true,
			MaxConnsPerHost:   1,
			HTTP2:             &http.HTTP2Config{StrictMaxConcurrentRequests: true},
			DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				tally.add(func(a *attackTally) { a.Connected++ })
				return (&net.Dialer{}).DialContext(ctx, network, addr)
			},
		}
		client := &http.Client{Transport: tr}
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
					tally.add(func(a *attackTally) { a.Opened++ })
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
							if a.Overdue++; a.Overdue == 1 {
								a.Overdue1 = fmt.Sprintf("a stream was not answered %v after it was opened: %v", took.Round(time.Millisecond), err)
							}
						case err != nil:
							a.Errs["transport error"]++
						case resp.ProtoMajor != 2:
							a.Errs["answered over "+resp.Proto]++
						default:
							a.Answers[strconv.Itoa(resp.StatusCode)]++
							a.Longest = max(a.Longest, took)
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
// twice their p99 with no attack (or p99Floor; see strictP99Var). Every attacking connection
// (every stream, over HTTP/2) is closed or answered by the server within
// holdBound, a few seconds, whether it has a key or not. The server runs
// on a CPU of its own and its clients on the others (see splitCPUs).
func TestAttacks(t *testing.T) {
	bin, clients := buildServer(t), buildClients(t)
	start, cpus := splitCPUs(t)
	t.Log(cpus)
	const attacker = "attacker-key-0123456789"
	keys := []string{"mallory:" + attacker}
	var victimKeys []string
	for i := range victims {
		victimKeys = append(victimKeys, fmt.Sprintf("victim-key-%d-0123456789", i))
		keys = append(keys, fmt.Sprintf("victor%d:%s", i, victimKeys[i]))
	}
	cases := []struct {
		name   string
		args   []string
		tls    bool // the server serves HTTPS, and so HTTP/2, and the victims speak HTTP/2
		attack attackConfig
	}{{
		name:   "docs bundle never read, no key, 60 connections",
		attack: attackConfig{Kind: "docs", Conns: 60},
	}, {
		name:   "bodies dripping at a byte a second, one key, 100 connections",
		attack: attackConfig{Kind: "drip", Conns: 100},
	}, {
		name:   "one key on most connections, -max-conns 64, 100 connections",
		args:   []string{"-max-conns", "64"},
		attack: attackConfig{Kind: "drip", Conns: 100},
	}, {
		name:   "deep pages and unique Idempotency-Keys, one key, 4 requests in flight",
		attack: attackConfig{Kind: "flood", Conns: 4},
	}, {
		name:   "HTTP/2, 32 connections x 32 streams dripping bodies at a byte a second, one key",
		tls:    true,
		attack: attackConfig{Kind: "h2", Conns: 32, Streams: 32},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"-store", "memory"}, c.args...)
			caFile := ""
			if c.tls {
				ca := newTestCA(t)
				cert, key := pairFiles(t, ca.valid(t))
				args = append(args, "-tls-cert", cert, "-tls-key", key)
				caFile = filepath.Join(t.TempDir(), "ca.pem")
				if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.cert.Raw}), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			p := start(t, bin, strings.Join(keys, ","), defaultBudgets, args...)
			v := startVictims(t, clients, p, caFile, victimKeys)
			time.Sleep(warmUp)
			m0 := markNow(t, p, v)
			time.Sleep(quietFor)
			cfg := c.attack
			cfg.Key, cfg.Addr, cfg.BaseURL, cfg.Path, cfg.CAFile, cfg.For = attacker, p.addr, p.baseURL, p.path, caFile, loudFor
			a := startAttack(t, clients, cfg)
			m1 := markNow(t, p, v)
			a.expect(t, "stopped")
			m2 := markNow(t, p, v)
			tally, attackCPU := a.finish(t)
			m3 := markNow(t, p, v)
			time.Sleep(quietFor)
			m4 := markNow(t, p, v)
			r := v.stop(t)

			before, after := quietIn(r.Samples, m0.at, m1.at), quietIn(r.Samples, m3.at, m4.at)
			quiet, loud := append(before, after...), loudIn(r.Samples, m1.at, m2.at)
			q, l := p99(quiet), p99(loud)
			t.Logf("victims' p99: %v with no attack (%d requests; %v before the attack, %v after), %v under attack (%d requests): %.2f times",
				q, len(quiet), p99(before), p99(after), l, len(loud), float64(l)/float64(q))
			t.Logf("victims with no attack: %s; under attack: %s", spread(quiet), spread(loud))
			sq, vq := cores(m0, m1)
			sl, vl := cores(m1, m2)
			t.Logf("cores used with no attack and under it: the server %.2f and %.2f, the victims %.2f and %.2f; the attackers %.2f; victims' answers %v",
				sq, sl, vq, vl, attackCPU.Seconds()/m3.at.Sub(m1.at).Seconds(), r.Protos)
			t.Logf("attacking connections or streams: %s; the longest to be closed or answered took %v, and all had ended %v after the attack stopped",
				tally, tally.Longest.Round(time.Millisecond), m3.at.Sub(m2.at).Round(time.Millisecond))

			if len(r.Failures) > 0 {
				t.Errorf("the victims failed %d times; the first: %s", len(r.Failures), r.Failures[0])
			}
			if min(len(before), len(after), len(loud)/2) < 400 {
				t.Errorf("the victims sent %d requests before the attack, %d during it and %d after; want hundreds in each, for a p99", len(before), len(loud), len(after))
			}
			floor := p99Alarm
			if os.Getenv(strictP99Var) == "1" {
				floor = p99Floor
			}
			if limit := 2 * max(q, floor); l > limit {
				t.Errorf("the victims' p99 under attack is %v, %.2f times their p99 with no attack (%v); want at most %v", l, float64(l)/float64(q), q, limit)
			}
			if tally.Overdue > 0 {
				t.Errorf("%d attacking connections or streams were not closed or answered within %v; %s", tally.Overdue, holdBound, tally.Overdue1)
			}
			for _, f := range tally.Failures {
				t.Errorf("the attack: %s", f)
			}
			if tally.Opened == 0 {
				t.Errorf("the attack opened no connection")
			}
		})
	}
}
