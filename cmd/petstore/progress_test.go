package main

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/petstore-go/petstore"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// The tests in this file check that a client makes progress or lets go:
// an answer served without a key leaves within publicWriteTimeout however
// steadily it is read, each connection's kernel buffers are bounded, and
// pipelined requests that are not read stop being read.

// bundlePath is the path, under the base URL, of the docs page's largest
// file, Swagger UI's bundle.
const bundlePath = "/docs/swagger-ui-bundle.js"

// fetchBundle reads the docs bundle through client in full, uncompressed,
// and returns it.
func fetchBundle(t *testing.T, client *http.Client, baseURL string) []byte {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, baseURL+bundlePath, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept-Encoding", "identity")
	a, err := do(client, req)
	if err != nil {
		t.Fatal(err)
	}
	if a.status != http.StatusOK || a.header.Get("Content-Encoding") != "" {
		t.Fatalf("GET %s with Accept-Encoding: identity answered %d, Content-Encoding %q; want 200 uncompressed",
			bundlePath, a.status, a.header.Get("Content-Encoding"))
	}
	return a.body
}

// procNetAddr writes addr as /proc/net/tcp does: the IPv4 address as the
// host reads its four bytes, and the port, both in hexadecimal.
func procNetAddr(addr *net.TCPAddr) string {
	ip4 := addr.IP.To4()
	if ip4 == nil {
		return ""
	}
	return fmt.Sprintf("%08X:%04X", binary.NativeEndian.Uint32(ip4), addr.Port)
}

// tcpState returns the state, as /proc/net/tcp writes it ("01" for
// ESTABLISHED, "04" for FIN_WAIT1 and so on), of the socket of this host
// whose local address is local and whose peer is remote, or "" when there
// is none. The test reads it for the server's end of a connection, which
// leaves ESTABLISHED the moment the server closes it, while the client
// still has the data already sent to read.
func tcpState(local, remote net.Addr) (string, error) {
	l, r := procNetAddr(local.(*net.TCPAddr)), procNetAddr(remote.(*net.TCPAddr))
	b, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		return "", err
	}
	for line := range strings.Lines(string(b)) {
		f := strings.Fields(line)
		if len(f) > 3 && f[1] == l && f[2] == r {
			return f[3], nil
		}
	}
	return "", nil
}

// tcpEstablished is the state of an open connection in /proc/net/tcp.
const tcpEstablished = "01"

// TestPublicWriteDeadline checks that an answer served without a key must
// leave within publicWriteTimeout in all, while an answer to a valid key
// is held to the longer -write-timeout only.
//
// Over HTTP/1.1, a client asks for the docs bundle uncompressed on a
// connection with a small receive buffer and reads it steadily, 16 KiB a
// second: each of the server's writes drains well within writeGrace, so
// only the deadline of the answer as a whole can stop it. The server must
// close the connection between a second before publicWriteTimeout and one
// and a half writeGrace (and two seconds) after it, as its end of the
// connection in /proc/net/tcp shows, and the client must get less than the
// whole bundle. The contrast cannot be made over HTTP/1.1: the largest
// answer to a key, a page of 100 pets whose names are 256 characters that
// JSON escapes to six bytes each, is about 160 KB written in one write,
// which pace gives at most one and a half writeGrace, so no keyed answer
// is still being written when the public deadline would fall.
//
// It is made over HTTP/2, where the client paces the server with flow
// control rather than by reading the socket: on one connection, a stream
// asks for the docs bundle without a key and another for that page of 100
// pets with a key, and the client lets each receive 10 KiB a second. The
// client reads the connection as fast as it comes, so no write to it
// stalls, and -write-timeout (30 s) is far off; the bundle's stream must be reset near publicWriteTimeout, with less than
// the bundle sent, and the page must arrive whole, intact, on the open
// connection, more than two seconds after publicWriteTimeout had passed.
func TestPublicWriteDeadline(t *testing.T) {
	bin := buildServer(t)
	const key = "reader-key-0123456789"
	lo, hi := publicWriteTimeout-time.Second, publicWriteTimeout+writeGrace*3/2+2*time.Second

	t.Run("docs bundle read slowly over HTTP 1.1", func(t *testing.T) {
		t.Parallel()
		p := startServer(t, bin, "reader:"+key, nil, "-store", "memory")
		bundle := fetchBundle(t, &http.Client{Timeout: 30 * time.Second}, p.baseURL)

		d := net.Dialer{Control: smallReceiveBuffer, Timeout: 5 * time.Second}
		conn, err := d.Dial("tcp", p.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		server, err := net.ResolveTCPAddr("tcp", p.addr)
		if err != nil {
			t.Fatal(err)
		}
		head := "GET " + strings.TrimSuffix(p.path, "/pets") + bundlePath + " HTTP/1.1\r\nHost: x\r\nAccept-Encoding: identity\r\n\r\n"
		if _, err := io.WriteString(conn, head); err != nil {
			t.Fatal(err)
		}
		start := time.Now()

		// Read 16 KiB once a second, and look at the server's end of the
		// connection every 50 ms, until the server has closed it.
		const chunk = 16 << 10
		buf := make([]byte, chunk)
		got, reads := 0, 0
		var closed time.Duration
		next := start
		for closed == 0 && time.Since(start) < hi+time.Second {
			if now := time.Now(); !now.Before(next) {
				conn.SetReadDeadline(now.Add(time.Second))
				n, err := io.ReadFull(conn, buf)
				got += n
				reads++
				var ne net.Error
				if err != nil && !(errors.As(err, &ne) && ne.Timeout()) {
					t.Fatalf("reading the bundle ended after %v, %d bytes, before the server's end of the connection left ESTABLISHED: %v",
						time.Since(start), got, err)
				}
				next = next.Add(time.Second)
			}
			state, err := tcpState(server, conn.LocalAddr())
			if err != nil {
				t.Fatal(err)
			}
			if state != tcpEstablished {
				closed = time.Since(start)
				t.Logf("the server's end of the connection is in state %q of /proc/net/tcp after %v", state, closed.Round(10*time.Millisecond))
			}
			time.Sleep(50 * time.Millisecond)
		}
		slow := got
		// What the server sent before it closed arrives at once, then the
		// end of the stream.
		conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		rest, err := io.Copy(io.Discard, conn)
		got += int(rest)
		var ne net.Error
		ended := !(errors.As(err, &ne) && ne.Timeout())
		t.Logf("HTTP/1.1: %d bytes of the %d-byte bundle read at 16 KiB a second in %d reads, %d more after the close (%v); closed %v after the request (want %v to %v)",
			slow, len(bundle), reads, rest, err, closed.Round(10*time.Millisecond), lo, hi)
		switch {
		case closed == 0:
			t.Errorf("the server still held the connection %v after the request; want it closed after about %v", time.Since(start).Round(time.Millisecond), publicWriteTimeout)
		case closed < lo || closed > hi:
			t.Errorf("the server closed the connection %v after the request; want between %v and %v", closed.Round(time.Millisecond), lo, hi)
		}
		if closed != 0 && !ended {
			t.Errorf("the connection did not end within 5s of the server's close")
		}
		if got >= len(bundle) {
			t.Errorf("the client got %d bytes; want fewer than the bundle's %d: the answer should have been cut", got, len(bundle))
		}
	})

	t.Run("keyed page and docs bundle read slowly over HTTP 2", func(t *testing.T) {
		t.Parallel()
		ca := newTestCA(t)
		certFile, keyFile := pairFiles(t, ca.valid(t))
		p := startServer(t, bin, "reader:"+key, nil, "-store", "memory", "-tls-cert", certFile, "-tls-key", keyFile)
		client := ca.client()
		name := strings.Repeat("<", petstore.MaxNameLength) // six bytes each in JSON: \u003c
		for i := range petstore.MaxPageSize {
			req, err := newCreate(t.Context(), p.baseURL, key, "", petstore.NewPet{Name: name, CategoryID: 1})
			if err != nil {
				t.Fatal(err)
			}
			if a, err := do(client, req); err != nil || a.status != http.StatusCreated {
				t.Fatalf("creating pet %d: %v %v", i, a, err)
			}
		}
		query := fmt.Sprintf("?limit=%d", petstore.MaxPageSize)
		pagePath := p.path + query
		req, err := newGet(t.Context(), p.baseURL, key, "/pets"+query)
		if err != nil {
			t.Fatal(err)
		}
		page, err := do(client, req)
		if err != nil || page.status != http.StatusOK {
			t.Fatalf("GET %s: %v %v", pagePath, page, err)
		}
		bundle := fetchBundle(t, client, p.baseURL)
		const rate = 10 << 10 // bytes a second on each stream
		if least := int((publicWriteTimeout + 3*time.Second).Seconds() * rate); len(page.body) < least {
			t.Fatalf("the page of %d pets is %d bytes; at %d bytes a second it must be at least %d to outlast the public deadline",
				petstore.MaxPageSize, len(page.body), rate, least)
		}

		conn, fr := rawH2(t, p, ca)
		fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
		var wmu sync.Mutex // the framer's writes
		write := func(f func() error) error {
			wmu.Lock()
			defer wmu.Unlock()
			return f()
		}
		// Streams start with no window: the client opens them by rate.
		if err := fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 0}); err != nil {
			t.Fatal(err)
		}
		const bundleStream, pageStream = 1, 3
		for _, s := range []struct {
			id     uint32
			path   string
			header [2]string
		}{
			{bundleStream, strings.TrimSuffix(p.path, "/pets") + bundlePath, [2]string{"accept-encoding", "identity"}},
			{pageStream, pagePath, [2]string{"authorization", "Bearer " + key}},
		} {
			var hdr strings.Builder
			enc := newHPACK(&hdr)
			enc(":method", "GET")
			enc(":scheme", "https")
			enc(":authority", p.addr)
			enc(":path", s.path)
			enc(s.header[0], s.header[1])
			if err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: s.id, BlockFragment: []byte(hdr.String()), EndStream: true, EndHeaders: true}); err != nil {
				t.Fatal(err)
			}
		}
		start := time.Now()

		// What the server sent on each stream, kept by the reader below.
		type stream struct {
			status string
			body   []byte
			ended  time.Duration // when END_STREAM came, or 0
			reset  time.Duration // when RST_STREAM came, or 0
			code   http2.ErrCode
		}
		var (
			mu      sync.Mutex
			streams = map[uint32]*stream{bundleStream: {}, pageStream: {}}
			goAway  string
			readErr error
		)
		done := make(chan struct{})
		go func() {
			defer close(done)
			for {
				f, err := fr.ReadFrame()
				if err != nil {
					mu.Lock()
					readErr = err
					mu.Unlock()
					return
				}
				mu.Lock()
				s := streams[f.Header().StreamID]
				switch f := f.(type) {
				case *http2.SettingsFrame:
					if !f.IsAck() {
						err = write(fr.WriteSettingsAck)
					}
				case *http2.PingFrame:
					if !f.IsAck() {
						err = write(func() error { return fr.WritePing(true, f.Data) })
					}
				case *http2.MetaHeadersFrame:
					if s != nil {
						s.status = f.PseudoValue("status")
					}
				case *http2.DataFrame:
					if s != nil {
						s.body = append(s.body, f.Data()...)
						if f.StreamEnded() {
							s.ended = time.Since(start)
						}
					}
					// The connection's window is never what holds the
					// server back: give back at once what each frame took.
					if n := f.Header().Length; n > 0 {
						err = write(func() error { return fr.WriteWindowUpdate(0, n) })
					}
				case *http2.RSTStreamFrame:
					if s != nil {
						s.reset, s.code = time.Since(start), f.ErrCode
					}
				case *http2.GoAwayFrame:
					goAway = fmt.Sprintf("%v after %v", f.ErrCode, time.Since(start).Round(time.Millisecond))
				}
				mu.Unlock()
				if err != nil {
					return
				}
			}
		}()

		// Open each stream's window by rate once a second, until both
		// streams are over, the connection is, or -write-timeout has passed.
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		giveUp := time.After(30 * time.Second)
	pace:
		for {
			var open []uint32
			mu.Lock()
			for id, s := range streams {
				if s.ended == 0 && s.reset == 0 {
					open = append(open, id)
				}
			}
			mu.Unlock()
			if len(open) == 0 {
				break
			}
			for _, id := range open {
				if err := write(func() error { return fr.WriteWindowUpdate(id, rate) }); err != nil {
					t.Errorf("opening the window of stream %d: %v", id, err)
					break pace
				}
			}
			select {
			case <-tick.C:
			case <-done:
				break pace
			case <-giveUp:
				break pace
			}
		}
		conn.Close()
		<-done

		mu.Lock()
		defer mu.Unlock()
		b, pg := streams[bundleStream], streams[pageStream]
		t.Logf("HTTP/2 at %d bytes a second: the bundle's stream: status %s, %d of %d bytes, reset %v after the request (%v), ended %v",
			rate, b.status, len(b.body), len(bundle), b.reset.Round(10*time.Millisecond), b.code, b.ended)
		t.Logf("HTTP/2 at %d bytes a second: the keyed page's stream: status %s, %d of %d bytes, ended %v after the request, reset %v",
			rate, pg.status, len(pg.body), len(page.body), pg.ended.Round(10*time.Millisecond), pg.reset)
		if goAway != "" {
			t.Errorf("the server sent GOAWAY %s; want the connection kept for the keyed page", goAway)
		}
		if b.status != "200" {
			t.Errorf("the bundle's stream was answered %q; want 200", b.status)
		}
		switch {
		case b.reset == 0:
			t.Errorf("the bundle's stream was not reset (ended %v, %d of %d bytes, read error %v); want it reset after about %v",
				b.ended, len(b.body), len(bundle), readErr, publicWriteTimeout)
		case b.reset < lo || b.reset > hi:
			t.Errorf("the bundle's stream was reset %v after the request; want between %v and %v", b.reset.Round(time.Millisecond), lo, hi)
		}
		if len(b.body) >= len(bundle) {
			t.Errorf("the bundle's stream carried %d bytes; want fewer than the bundle's %d", len(b.body), len(bundle))
		}
		if pg.status != "200" || pg.reset != 0 || pg.ended == 0 {
			t.Errorf("the keyed page's stream: status %q, reset %v (%v), ended %v, read error %v; want 200 sent in full",
				pg.status, pg.reset, pg.code, pg.ended, readErr)
		} else if pg.ended < publicWriteTimeout+2*time.Second {
			t.Errorf("the keyed page arrived in full %v after the request; the test wants it paced past %v to show that the public deadline does not hold it",
				pg.ended, publicWriteTimeout+2*time.Second)
		}
		if string(pg.body) != string(page.body) {
			t.Errorf("the keyed page's stream carried %d bytes that differ from the page's %d", len(pg.body), len(page.body))
		}
	})
}

// sockBuffers returns the send and receive buffers (SO_SNDBUF, SO_RCVBUF)
// of c's socket, as the kernel reports them.
func sockBuffers(t *testing.T, c *net.TCPConn) (snd, rcv int) {
	t.Helper()
	raw, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var serr, rerr error
	if err := raw.Control(func(fd uintptr) {
		snd, serr = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_SNDBUF)
		rcv, rerr = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF)
	}); err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(serr, rerr); err != nil {
		t.Fatal(err)
	}
	return snd, rcv
}

// TestSocketBuffers checks that the listener sets the send and the receive
// buffer of each connection it accepts to sockBuffer, which Linux reports
// doubled, for its bookkeeping.
//
// A connection accepted without the listener has the buffers that its
// listening socket had: the kernel's defaults on a plain listener, and the
// buffers set on the listening socket otherwise. The kernel's default
// receive buffer (the middle value of net.ipv4.tcp_rmem) is often 128 KiB,
// just what the listener sets, so a plain listener alone cannot show that
// the receive buffer is set; the test also uses a listening socket with
// buffers of 1 MiB, on which a connection keeps 2 MiB of each unless the
// listener sets them. There it first checks, with a connection accepted
// without the listener, that both buffers start from another size than
// 2*sockBuffer.
func TestSocketBuffers(t *testing.T) {
	const want = 2 * sockBuffer
	for _, tc := range []struct {
		name     string
		listener int // the buffers set on the listening socket, or 0 for the kernel's defaults
	}{{"kernel defaults", 0}, {"1 MiB on the listening socket", 1 << 20}} {
		t.Run(tc.name, func(t *testing.T) {
			lc := net.ListenConfig{}
			if tc.listener > 0 {
				lc.Control = func(_, _ string, c syscall.RawConn) error {
					var err error
					if cerr := c.Control(func(fd uintptr) {
						err = errors.Join(
							syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_SNDBUF, tc.listener),
							syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, tc.listener))
					}); cerr != nil {
						return cerr
					}
					return err
				}
			}
			ln, err := lc.Listen(t.Context(), "tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			accept := func(ln net.Listener) net.Conn {
				t.Helper()
				client, err := net.Dial("tcp", ln.Addr().String())
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { client.Close() })
				c, err := ln.Accept()
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { c.Close() })
				return c
			}

			// The buffers a connection has when nothing sets them.
			plainSnd, plainRcv := sockBuffers(t, accept(ln).(*net.TCPConn))
			if tc.listener > 0 && (plainSnd == want || plainRcv == want) {
				t.Fatalf("a connection accepted without the listener has SO_SNDBUF %d and SO_RCVBUF %d; "+
					"the test needs both to differ from %d to see that the listener sets them", plainSnd, plainRcv, want)
			}

			c := accept(limitListener(ln, 4))
			lc2, ok := c.(*limitedConn)
			if !ok {
				t.Fatalf("the listener accepted a %T; want a *limitedConn", c)
			}
			tc2, ok := lc2.Conn.(*net.TCPConn)
			if !ok {
				t.Fatalf("the connection under the *limitedConn is a %T; want a *net.TCPConn", lc2.Conn)
			}
			snd, rcv := sockBuffers(t, tc2)
			t.Logf("SO_SNDBUF %d and SO_RCVBUF %d through the listener; %d and %d without it", snd, rcv, plainSnd, plainRcv)
			if snd != want || rcv != want {
				t.Errorf("the accepted connection has SO_SNDBUF %d and SO_RCVBUF %d; want %d (twice sockBuffer) for both", snd, rcv, want)
			}
		})
	}
}

// smallBuffers asks for small send and receive buffers on a client's
// socket, so that what the client manages to write measures what the
// server takes, not what the client's own kernel holds.
func smallBuffers(network, address string, c syscall.RawConn) error {
	if err := smallReceiveBuffer(network, address, c); err != nil {
		return err
	}
	var err error
	if cerr := c.Control(func(fd uintptr) {
		err = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_SNDBUF, 4096)
	}); cerr != nil {
		return cerr
	}
	return err
}

// TestPipeliningBounded sends 20,000 small keyed GETs pipelined on one
// connection, without reading any answer, against the server process.
// net/http reads a connection's next request only once it has written the
// answer to the one before, and the answers fill the kernel's buffers, so
// the server stops reading. What the client writes before its write
// deadline is then what the server's receive buffer holds, with the
// requests of the answers that fill its send buffer (each smaller than its
// answer), and must be under 512 KiB, four times the 2*sockBuffer that
// each of those buffers holds, of the 1.6 MB it tries. The server's
// resident memory must not grow by more than 32 MB meanwhile, and a client
// with another key must be served within a second. Once the client reads,
// the first 100 answers must each be a well-formed 200 with the pet that
// its request asked for, in the order of the requests.
func TestPipeliningBounded(t *testing.T) {
	const (
		key, otherKey = "piper-key-0123456789", "other-key-0123456789"
		requests      = 20_000
		writeFor      = 3 * time.Second // below writeGrace: the client reads before the server's blocked write is cut
		boundBytes    = 4 * 2 * sockBuffer
		boundRSS      = 32 << 20
		prompt        = time.Second
		answers       = 100
	)
	p := startServer(t, buildServer(t), "piper:"+key+",other:"+otherKey, nil, "-store", "memory")
	client := &http.Client{Timeout: 10 * time.Second}
	var ids []int64
	for i := range 10 {
		req, err := newCreate(t.Context(), p.baseURL, key, "", petstore.NewPet{Name: fmt.Sprintf("pipelined %d", i), CategoryID: 1})
		if err != nil {
			t.Fatal(err)
		}
		a, err := do(client, req)
		if err != nil || a.status != http.StatusCreated {
			t.Fatalf("creating pet %d: %v %v", i, a, err)
		}
		pet, err := a.pet()
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, pet.ID)
	}
	pid := p.cmd.Process.Pid
	before, err := memoryKB(pid, "VmRSS")
	if err != nil {
		t.Fatal(err)
	}

	var all []byte
	for i := range requests {
		all = fmt.Appendf(all, "GET %s/%d HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n\r\n", p.path, ids[i%len(ids)], key)
	}
	if len(all) < 2*boundBytes {
		t.Fatalf("the requests are %d bytes; the test wants at least %d to show the bound", len(all), 2*boundBytes)
	}
	d := net.Dialer{Control: smallBuffers, Timeout: 5 * time.Second}
	conn, err := d.Dial("tcp", p.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()

	// The other client asks once the pipelining client has filled the
	// buffers, halfway through its write.
	type outcome struct {
		a    apiAnswer
		err  error
		took time.Duration
	}
	other := make(chan outcome, 1)
	go func() {
		time.Sleep(writeFor / 2)
		req, err := newGet(t.Context(), p.baseURL, otherKey, fmt.Sprintf("/pets/%d", ids[0]))
		if err != nil {
			other <- outcome{err: err}
			return
		}
		start := time.Now()
		a, err := do(&http.Client{Timeout: 10 * time.Second}, req)
		other <- outcome{a, err, time.Since(start)}
	}()

	conn.SetWriteDeadline(time.Now().Add(writeFor))
	n, werr := conn.Write(all)
	after, err := memoryKB(pid, "VmRSS")
	if err != nil {
		t.Fatal(err)
	}
	o := <-other
	t.Logf("pipelining: %d bytes written of %d (%d whole requests of %d) before the write deadline of %v (%v)",
		n, len(all), n/(len(all)/requests), requests, writeFor, werr)
	t.Logf("server VmRSS: %.1f MB before, %.1f MB after the write (%+.1f MB); the other client: %d in %v (%v)",
		float64(before)/1024, float64(after)/1024, float64(after-before)/1024, o.a.status, o.took.Round(time.Millisecond), o.err)
	var ne net.Error
	if !errors.As(werr, &ne) || !ne.Timeout() {
		t.Errorf("the write of %d bytes of pipelined requests ended with %v after %d bytes; want it held until its deadline", len(all), werr, n)
	}
	if n >= boundBytes {
		t.Errorf("the client wrote %d bytes of pipelined requests that it did not read the answers to; want under %d", n, boundBytes)
	}
	if grew := (after - before) << 10; grew > boundRSS {
		t.Errorf("the server's resident memory grew by %d MB while one connection pipelined requests; want at most %d MB", grew>>20, boundRSS>>20)
	}
	if o.err != nil || o.a.status != http.StatusOK || o.took > prompt {
		t.Errorf("the other client, meanwhile: %v %v in %v; want 200 within %v", o.a, o.err, o.took, prompt)
	}

	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(conn)
	for i := range answers {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("answer %d: %v", i, err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatalf("the body of answer %d: %v", i, err)
		}
		pet, err := apiAnswer{status: resp.StatusCode, header: resp.Header, body: body}.pet()
		if resp.StatusCode != http.StatusOK || err != nil || pet.ID != ids[i%len(ids)] {
			t.Fatalf("answer %d: %s %q (%v); want 200 with pet %d", i, resp.Status, body, err, ids[i%len(ids)])
		}
	}
}
