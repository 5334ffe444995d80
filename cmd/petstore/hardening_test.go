package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// The tests in this file run the server process over TLS against what one
// client with a valid key can do to it: hold request bodies on many HTTP/2
// streams, flood control frames, send oversized heads, and hold the
// connection slots with idle connections and unfinished handshakes.

// startTLSServer starts the server process serving HTTPS with a
// certificate of a new CA, and returns it with the CA.
func startTLSServer(t *testing.T, key string, args ...string) (*serverProcess, *testCA) {
	t.Helper()
	ca := newTestCA(t)
	certFile, keyFile := pairFiles(t, ca.valid(t))
	p := startServer(t, buildServer(t), key, nil, append([]string{"-tls-cert", certFile, "-tls-key", keyFile}, args...)...)
	return p, ca
}

// memoryKB returns the field (VmRSS, VmHWM) of /proc/PID/status in KiB.
func memoryKB(pid int, field string) (int, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			return strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", field, pid)
}

// stalledBody is a request body that gives n bytes and then blocks until
// stop is closed: a body declared longer than it ever gets.
type stalledBody struct {
	n    int
	stop <-chan struct{}
}

func (b *stalledBody) Read(p []byte) (int, error) {
	if b.n == 0 {
		<-b.stop
		return 0, io.ErrUnexpectedEOF
	}
	k := min(len(p), b.n)
	clear(p[:k])
	b.n -= k
	return k, nil
}

// normalClient makes, until stop is closed, a GET of the list and a POST
// of a pet every interval on a connection of its own, and records each
// outcome.
type normalClient struct {
	mu        sync.Mutex
	latencies []time.Duration
	failures  []string
}

func (n *normalClient) run(t *testing.T, client *http.Client, p *serverProcess, key string, stop <-chan struct{}, interval time.Duration) {
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		case <-time.After(interval):
		}
		var req *http.Request
		if i%2 == 0 {
			req, _ = http.NewRequest("GET", p.baseURL+"/pets?limit=5", nil)
		} else {
			req, _ = http.NewRequest("POST", p.baseURL+"/pets", strings.NewReader(`{"name":"Calm","categoryId":1}`))
			req.Header.Set("Content-Type", "application/json")
		}
		req.Header.Set("Authorization", "Bearer "+key)
		t0 := time.Now()
		resp, err := client.Do(req)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode/100 != 2 {
				err = fmt.Errorf("status %s", resp.Status)
			}
		}
		n.mu.Lock()
		if err != nil {
			n.failures = append(n.failures, fmt.Sprintf("%s after %v: %v", req.Method, time.Since(t0).Round(time.Millisecond), err))
		} else {
			n.latencies = append(n.latencies, time.Since(t0))
		}
		n.mu.Unlock()
	}
}

// summary returns the count, median and maximum of the latencies.
func (n *normalClient) summary() (int, time.Duration, time.Duration) {
	n.mu.Lock()
	defer n.mu.Unlock()
	l := slices.Clone(n.latencies)
	slices.Sort(l)
	if len(l) == 0 {
		return 0, 0, 0
	}
	return len(l), l[len(l)/2], l[len(l)-1]
}

// TestH2StreamsMemory is the load test of HTTP/2 stream limits: 32 HTTP/2
// connections with one valid key, each opening 250 POST streams that
// declare a body of 65,536 bytes, send 65,535 and never finish, as fast as
// the server lets them, for 12 seconds. The server's memory (the peak of
// its resident set, VmHWM) must stay under 256 MB, and a client on a
// connection of its own must have its lists and creates served meanwhile.
func TestH2StreamsMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping a load test that runs the server as a process in -short mode")
	}
	const (
		key         = "streams-key"
		conns       = 32
		streams     = 250
		declared    = 65536
		sent        = declared - 1
		attack      = 12 * time.Second
		bodyTimeout = 3 * time.Second
		limitMB     = 256
	)
	const normalKey = "normal-key" // a caller of its own, which the attacker's share does not hold back
	p, ca := startTLSServer(t, key+","+normalKey, "-store", "memory", "-body-timeout", bodyTimeout.String())
	pid := p.cmd.Process.Pid
	before, err := memoryKB(pid, "VmRSS")
	if err != nil {
		t.Fatal(err)
	}

	stop := make(chan struct{})
	var (
		started, answered, failed atomic.Int64
		statuses                  sync.Map // status code -> *atomic.Int64
		wg                        sync.WaitGroup
	)
	for range conns {
		// A transport per connection, holding to one connection.
		client := ca.client()
		tr := client.Transport.(*http.Transport)
		tr.MaxConnsPerHost = 1
		tr.HTTP2 = &http.HTTP2Config{StrictMaxConcurrentRequests: true}
		client.Timeout = 0
		for range streams {
			wg.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					ctx, cancel := context.WithCancel(context.Background())
					go func() {
						select {
						case <-stop:
						case <-ctx.Done():
						}
						cancel()
					}()
					req, _ := http.NewRequestWithContext(ctx, "POST", p.baseURL+"/pets", &stalledBody{n: sent, stop: ctx.Done()})
					req.ContentLength = declared
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("Authorization", "Bearer "+key)
					started.Add(1)
					resp, err := client.Do(req)
					if err != nil {
						failed.Add(1)
						cancel()
						select {
						case <-stop:
							return
						case <-time.After(50 * time.Millisecond):
						}
						continue
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					cancel()
					answered.Add(1)
					c, _ := statuses.LoadOrStore(resp.StatusCode, new(atomic.Int64))
					c.(*atomic.Int64).Add(1)
				}
			})
		}
	}

	var normal normalClient
	normalDone := make(chan struct{})
	go func() {
		defer close(normalDone)
		client := ca.client()
		client.Timeout = 3*bodyTimeout + 5*time.Second
		normal.run(t, client, p, normalKey, stop, 250*time.Millisecond)
	}()

	peakRSS := 0
	deadline := time.Now().Add(attack)
	for time.Now().Before(deadline) {
		if kb, err := memoryKB(pid, "VmRSS"); err == nil {
			peakRSS = max(peakRSS, kb)
		}
		time.Sleep(100 * time.Millisecond)
	}
	hwm, err := memoryKB(pid, "VmHWM")
	if err != nil {
		t.Fatal(err)
	}
	close(stop)
	wg.Wait()
	<-normalDone

	var byStatus []string
	statuses.Range(func(k, v any) bool {
		byStatus = append(byStatus, fmt.Sprintf("%d: %d", k, v.(*atomic.Int64).Load()))
		return true
	})
	slices.Sort(byStatus)
	n, median, worst := normal.summary()
	t.Logf("attack of %v, %d connections × %d streams of %d bytes declared, %d sent: %d requests started, %d answered (%s), %d cut off by the end of the attack or refused",
		attack, conns, streams, declared, sent, started.Load(), answered.Load(), strings.Join(byStatus, ", "), failed.Load())
	t.Logf("server memory: %.1f MB before, peak resident %.1f MB sampled, VmHWM %.1f MB (limit %d MB)",
		float64(before)/1024, float64(peakRSS)/1024, float64(hwm)/1024, limitMB)
	t.Logf("the normal client: %d requests served, median %v, max %v, %d failed",
		n, median.Round(time.Millisecond), worst.Round(time.Millisecond), len(normal.failures))

	if hwm > limitMB*1024 {
		t.Errorf("the server's resident memory peaked at %.1f MB under the attack; want under %d MB", float64(hwm)/1024, limitMB)
	}
	for _, f := range normal.failures {
		t.Errorf("the normal client was not served during the attack: %s", f)
	}
	if n < 4 {
		t.Errorf("the normal client was served %d times in %v; want it served throughout", n, attack)
	}
}

// rawH2 opens an HTTP/2 connection to p over TLS, trusting ca, and sends
// the client preface and its SETTINGS.
func rawH2(t *testing.T, p *serverProcess, ca *testCA) (*tls.Conn, *http2.Framer) {
	t.Helper()
	client := ca.client()
	cfg := client.Transport.(*http.Transport).TLSClientConfig.Clone()
	cfg.NextProtos = []string{"h2"}
	d := &net.Dialer{Timeout: 5 * time.Second}
	conn, err := tls.DialWithDialer(d, "tcp", p.addr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if got := conn.ConnectionState().NegotiatedProtocol; got != "h2" {
		t.Fatalf("negotiated %q; want h2", got)
	}
	if _, err := io.WriteString(conn, http2.ClientPreface); err != nil {
		t.Fatal(err)
	}
	fr := http2.NewFramer(conn, conn)
	if err := fr.WriteSettings(); err != nil {
		t.Fatal(err)
	}
	return conn, fr
}

// TestH2ControlFloods floods the server process, on one HTTP/2
// connection, with each kind of control frame: the server must close that
// connection within a bound, while a client on another connection is
// served.
func TestH2ControlFloods(t *testing.T) {
	const (
		key      = "flood-key"
		bound    = 5 * time.Second // for the server to close a flooding connection
		floodFor = 3 * time.Second
	)
	p, ca := startTLSServer(t, key)
	tests := []struct {
		name  string
		frame func(fr *http2.Framer) error
	}{
		{"SETTINGS", func(fr *http2.Framer) error { return fr.WriteSettings() }},
		{"PING", func(fr *http2.Framer) error { return fr.WritePing(false, [8]byte{1}) }},
		{"WINDOW_UPDATE", func(fr *http2.Framer) error { return fr.WriteWindowUpdate(1, 1) }},
		{"PRIORITY", func(fr *http2.Framer) error {
			return fr.WritePriority(3, http2.PriorityParam{StreamDep: 1, Weight: 7})
		}},
		{"RST_STREAM", func(fr *http2.Framer) error { return fr.WriteRSTStream(1, http2.ErrCodeCancel) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var normal normalClient
			stop := make(chan struct{})
			normalDone := make(chan struct{})
			go func() {
				defer close(normalDone)
				client := ca.client()
				client.Timeout = bound
				normal.run(t, client, p, key, stop, 20*time.Millisecond)
			}()

			// Flood on one connection after another for floodFor.
			var closeTimes []time.Duration
			frames := 0
			start := time.Now()
			for time.Since(start) < floodFor {
				took, n, err := floodOnce(t, p, ca, key, tt.frame, bound)
				frames += n
				if err != nil {
					t.Error(err)
					break
				}
				closeTimes = append(closeTimes, took)
			}
			close(stop)
			<-normalDone
			slices.Sort(closeTimes)
			n, median, worst := normal.summary()
			if len(closeTimes) > 0 {
				t.Logf("%s flood for %v: %d connections closed by the server, each after at most %v (median %v); %d frames sent in all",
					tt.name, floodFor, len(closeTimes), closeTimes[len(closeTimes)-1].Round(time.Millisecond),
					closeTimes[len(closeTimes)/2].Round(time.Millisecond), frames)
			}
			t.Logf("the other client meanwhile: %d requests served, median %v, max %v, %d failed",
				n, median.Round(time.Millisecond), worst.Round(time.Millisecond), len(normal.failures))
			for _, f := range normal.failures {
				t.Errorf("the other client was not served during the flood: %s", f)
			}
			if n == 0 {
				t.Errorf("the other client was never served during the flood")
			}
		})
	}
	if err := waitForLog(p, "flooded control frames", 5*time.Second); err != nil {
		t.Error(err)
	}
}

// floodOnce opens an HTTP/2 connection, opens stream 1 on it with a GET,
// and then sends frames made by frame, in batches of 1,000, until the
// server closes the connection. It returns how long that took and how many
// frames were sent, or an error if the connection was still open after
// bound.
func floodOnce(t *testing.T, p *serverProcess, ca *testCA, key string, frame func(*http2.Framer) error, bound time.Duration) (time.Duration, int, error) {
	t.Helper()
	conn, _ := rawH2(t, p, ca)
	defer conn.Close()
	bw := bufio.NewWriterSize(conn, 64<<10)
	fr := http2.NewFramer(bw, conn)
	var hdr strings.Builder
	enc := newHPACK(&hdr)
	enc(":method", "GET")
	enc(":scheme", "https")
	enc(":authority", p.addr)
	enc(":path", p.path)
	enc("authorization", "Bearer "+key)
	if err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: []byte(hdr.String()), EndStream: true, EndHeaders: true}); err != nil {
		return 0, 0, err
	}
	closed := make(chan time.Time, 1)
	go func() {
		io.Copy(io.Discard, conn) // read what the server sends, until it closes
		closed <- time.Now()
	}()
	start := time.Now()
	frames := 0
	for time.Since(start) < bound {
		for range 1000 {
			if err := frame(fr); err != nil {
				break
			}
		}
		if err := bw.Flush(); err != nil {
			break
		}
		frames += 1000
		select {
		case end := <-closed:
			return end.Sub(start), frames, nil
		default:
		}
	}
	select {
	case end := <-closed:
		return end.Sub(start), frames, nil
	case <-time.After(time.Second):
	}
	return 0, frames, fmt.Errorf("the server kept a flooding connection open for %v (%d frames sent)", bound, frames)
}

// TestHeaderLimitBothProtocols checks that the head limit the README
// states, 16,384 bytes counted as HTTP/1.1 sends the head, holds over
// HTTPS with HTTP/1.1 and with HTTP/2 alike, and that over HTTP/2 an
// oversized head is answered 431 on its own stream: the connection serves
// the requests after it. Among the heads served is one with a single field
// of 13,000 bytes.
func TestHeaderLimitBothProtocols(t *testing.T) {
	const key = "header-key"
	p, ca := startTLSServer(t, key)
	host := p.addr
	// head returns the HTTP/1.1 head of a GET with the key and X-Pad
	// making it size bytes long.
	base := "GET " + p.path + " HTTP/1.1\r\nHost: " + host + "\r\nAuthorization: Bearer " + key + "\r\nX-Pad: "
	const end = "\r\n\r\n"
	pad := func(size, extra int) string { return strings.Repeat("p", size-extra-len(base)-len(end)) }

	tests := []struct {
		size int
		want int
	}{
		{13000 + len(base) + len(end), http.StatusOK}, // one field of 13,000 bytes
		{16<<10 - 512, http.StatusOK},
		{16 << 10, http.StatusOK},
		{16<<10 + 1, http.StatusRequestHeaderFieldsTooLarge},
		{20 << 10, http.StatusRequestHeaderFieldsTooLarge},
		{48 << 10, http.StatusRequestHeaderFieldsTooLarge},
	}
	for _, proto := range []string{"HTTP/1.1", "HTTP/2"} {
		t.Run(proto, func(t *testing.T) {
			client := ca.client()
			tr := client.Transport.(*http.Transport)
			tr.DisableCompression = true // no Accept-Encoding of the transport's own
			if proto == "HTTP/1.1" {
				// A new connection for each request: on a connection kept
				// alive, net/http reads the first byte of the next request
				// outside its count, and lets a head one byte longer in.
				tr.DisableKeepAlives = true
				tr.ForceAttemptHTTP2 = false
				tr.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
			}
			extra := 0 // what the transport adds to the head
			if proto == "HTTP/1.1" {
				extra = len("Connection: close\r\n")
			}
			newConns := 0
			for i, tt := range tests {
				// Each oversized request is followed by a normal one on
				// the same connection, over HTTP/2.
				for _, size := range []int{tt.size, 0} {
					req, _ := http.NewRequest("GET", p.baseURL+"/pets", nil)
					req.Header["User-Agent"] = []string{""} // none
					req.Header.Set("Authorization", "Bearer "+key)
					want := http.StatusOK
					if size > 0 {
						req.Header.Set("X-Pad", pad(size, extra))
						want = tt.want
					}
					req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
						GotConn: func(info httptrace.GotConnInfo) {
							if !info.Reused {
								newConns++
							}
						},
					}))
					resp, err := client.Do(req)
					if err != nil {
						t.Fatalf("request %d (head of %d bytes): %v", i, size, err)
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if got := fmt.Sprintf("HTTP/%d", resp.ProtoMajor); !strings.HasPrefix(proto, got) {
						t.Fatalf("answered over %s; want %s", resp.Proto, proto)
					}
					if resp.StatusCode != want {
						t.Errorf("a head of %d bytes over %s answered %s; want %d", size, proto, resp.Status, want)
					}
				}
			}
			if proto == "HTTP/2" && newConns != 1 {
				t.Errorf("the requests over HTTP/2 needed %d connections; want 1: an oversized head must not close the connection", newConns)
			}
		})
	}
}

// TestConnsIdleAndHandshakes runs the server process over TLS with
// -max-conns 8 while 16 clients hold unfinished TLS handshakes and 16 hold
// idle keep-alive connections, each dialling again as soon as the server
// closes its connection. A client on new connections must be served, each
// request within a bound.
func TestConnsIdleAndHandshakes(t *testing.T) {
	const (
		key      = "slots-key"
		maxConns = 8
		holders  = 16 // of each kind
		requests = 10
		bound    = 8 * time.Second
	)
	p, ca := startTLSServer(t, key, "-max-conns", strconv.Itoa(maxConns))
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var halfOpen, idle, closedByServer atomic.Int64
	tlsConfig := ca.client().Transport.(*http.Transport).TLSClientConfig.Clone()
	tlsConfig.NextProtos = []string{"http/1.1"}

	// An unfinished handshake: the first bytes of a TLS record, then
	// nothing.
	for range holders {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				conn, err := net.DialTimeout("tcp", p.addr, 5*time.Second)
				if err != nil {
					time.Sleep(20 * time.Millisecond)
					continue
				}
				conn.Write([]byte{0x16, 0x03, 0x01, 0x02, 0x00}) // a handshake record of 512 bytes, never sent
				halfOpen.Add(1)
				if heldUntilClosed(conn, stop) {
					closedByServer.Add(1)
				}
				conn.Close()
			}
		})
	}
	// An idle keep-alive connection: one request with the key, then
	// nothing.
	for range holders {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", p.addr, tlsConfig)
				if err != nil {
					time.Sleep(20 * time.Millisecond)
					continue
				}
				r := bufio.NewReader(conn)
				fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\n\r\n", p.path, p.addr, key)
				resp, err := http.ReadResponse(r, nil)
				if err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					idle.Add(1)
				}
				if heldUntilClosed(r, stop) {
					closedByServer.Add(1)
				}
				conn.Close()
			}
		})
	}

	time.Sleep(time.Second) // let the holders fill the places
	client := ca.client()
	client.Timeout = bound
	client.Transport.(*http.Transport).DisableKeepAlives = true
	var latencies []time.Duration
	var failures []string
	for i := range requests {
		t0 := time.Now()
		if err := getOK(client, p, key); err != nil {
			failures = append(failures, fmt.Sprintf("request %d after %v: %v", i+1, time.Since(t0).Round(time.Millisecond), err))
			continue
		}
		latencies = append(latencies, time.Since(t0))
		time.Sleep(100 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	slices.Sort(latencies)
	var median, worst time.Duration
	if len(latencies) > 0 {
		median, worst = latencies[len(latencies)/2], latencies[len(latencies)-1]
	}
	t.Logf("-max-conns %d: %d half-open handshakes and %d idle connections held, %d of them closed by the server",
		maxConns, halfOpen.Load(), idle.Load(), closedByServer.Load())
	t.Logf("the client: %d of %d served, median %v, max %v", len(latencies), requests, median.Round(time.Millisecond), worst.Round(time.Millisecond))
	for _, f := range failures {
		t.Errorf("the client was not served within %v: %s", bound, f)
	}
}

// newHPACK returns a function that appends a header field, HPACK-encoded,
// to w.
func newHPACK(w io.Writer) func(name, value string) {
	enc := hpack.NewEncoder(w)
	return func(name, value string) { enc.WriteField(hpack.HeaderField{Name: name, Value: value}) }
}

// heldUntilClosed reads r until the server closes the connection, and
// reports true, or until stop is closed, and reports false.
func heldUntilClosed(r io.Reader, stop <-chan struct{}) bool {
	done := make(chan struct{})
	go func() {
		io.Copy(io.Discard, r)
		close(done)
	}()
	select {
	case <-done:
		return true
	case <-stop:
		return false
	}
}
