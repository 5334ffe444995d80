// Command baseline is the reference that bench/load.sh measures the petstore
// server against: a bare net/http handler that answers with bytes held in
// memory.
//
// On start it waits up to 30 seconds for a running petstore server, seeds
// it with pets (POST /pets), then records that server's answers to the
// three requests of the load test: GET /pets?limit=20, GET /pets/12345 and
// POST /pets. It then serves those answers, with the same status, headers
// and body, from an http.Server configured as cmd/petstore configures its
// own: the difference between the two under the same load is the cost of
// the petstore handler.
//
// Usage:
//
//	baseline -addr 127.0.0.1:18081 -target http://127.0.0.1:18080/v1 -key KEY -seed 100000 [-seed-only]
package main

import (
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	log.SetFlags(0)
	log.SetPrefix("baseline: ")
	addr := flag.String("addr", "127.0.0.1:18081", "`address` to serve the baseline on")
	target := flag.String("target", "http://127.0.0.1:18080/v1", "base `URL` of the petstore server to seed and record")
	key := flag.String("key", "", "API `key` of the petstore server")
	seed := flag.Int("seed", 100_000, "`number` of pets to add to the petstore server before recording")
	seedOnly := flag.Bool("seed-only", false, "seed the petstore server, then exit without serving")
	flag.Parse()
	if *key == "" {
		log.Fatal("-key is required")
	}
	c := &client{base: *target, key: *key}
	if err := c.waitReady(); err != nil {
		log.Fatal(err)
	}
	start := time.Now()
	if err := c.seed(*seed); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("seeded %d pets in %v\n", *seed, time.Since(start).Round(time.Millisecond))
	if *seedOnly {
		return
	}

	var b baseline
	for _, r := range []struct {
		to           *response
		method, path string
		body         string
	}{
		{&b.list, http.MethodGet, "/pets?limit=20", ""},
		{&b.get, http.MethodGet, "/pets/12345", ""},
		{&b.create, http.MethodPost, "/pets", `{"name":"Rex","categoryId":3,"status":"available"}`},
	} {
		res, body, err := c.do(r.method, r.path, r.body)
		if err != nil {
			log.Fatal(err)
		}
		if res.StatusCode >= 300 {
			log.Fatalf("petstore answered %d: %s", res.StatusCode, body)
		}
		// Both servers set Date on every response themselves.
		*r.to = response{status: res.StatusCode, header: res.Header, body: body}
		r.to.header.Del("Date")
	}

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	// The same settings as cmd/petstore.
	srv := &http.Server{
		Handler:           &b,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    16 << 10,
		ErrorLog:          slog.NewLogLogger(slog.NewTextHandler(os.Stderr, nil), slog.LevelWarn),
	}
	fmt.Printf("ready: serving the baseline on http://%s\n", ln.Addr())
	log.Fatal(srv.Serve(ln))
}

// response is a recorded answer.
type response struct {
	status int
	header http.Header
	body   []byte
}

// baseline serves the recorded answers: POST gets the create answer, the
// collection path the list answer and anything else the get answer.
type baseline struct {
	list, get, create response
}

func (b *baseline) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	resp := &b.get
	switch {
	case r.Method == http.MethodPost:
		resp = &b.create
	case r.URL.RawQuery != "":
		resp = &b.list
	}
	maps.Copy(w.Header(), resp.header)
	w.WriteHeader(resp.status)
	_, _ = w.Write(resp.body)
}

// client talks to the petstore server.
type client struct {
	base, key string
}

var httpClient = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 16}}

// do sends a request, with body as JSON when it is not "", and returns the
// response and its body.
func (c *client) do(method, path, body string) (*http.Response, []byte, error) {
	req, err := http.NewRequest(method, c.base+path, strings.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := httpClient.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return res, b, err
}

// waitReady polls the server until it answers, for 30 seconds at most.
func (c *client) waitReady() error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		res, _, err := c.do(http.MethodGet, "/pets?limit=1", "")
		switch {
		case err == nil && res.StatusCode != http.StatusOK:
			return fmt.Errorf("petstore answered %s to GET /pets; is -key right?", res.Status)
		case err == nil:
			return nil
		case time.Now().After(deadline):
			return fmt.Errorf("petstore did not answer: %w", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// seed adds n pets from 8 goroutines, named "pet 1" and so on, in 7
// categories, their statuses cycling through none, available, pending and
// sold.
func (c *client) seed(n int) error {
	statuses := []string{"", `,"status":"available"`, `,"status":"pending"`, `,"status":"sold"`}
	var next atomic.Int64
	var failed error
	var once sync.Once
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for i := next.Add(1); i <= int64(n); i = next.Add(1) {
				body := fmt.Sprintf(`{"name":"pet %d","categoryId":%d%s}`, i, i%7+1, statuses[i%4])
				res, b, err := c.do(http.MethodPost, "/pets", body)
				if err == nil && res.StatusCode != http.StatusCreated {
					err = fmt.Errorf("POST /pets answered %s: %s", res.Status, b)
				}
				if err != nil {
					once.Do(func() { failed = err })
					next.Store(int64(n)) // stop the others
					return
				}
			}
		})
	}
	wg.Wait()
	return failed
}
