package client_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/client"
)

// canned is a transport that answers every request with the same 200
// answer, without a network or a server, so that a benchmark counts the
// allocations of the client (and of net/http's client side) alone, plus
// those of canned itself, which BenchmarkCanned measures.
type canned struct {
	header http.Header
	body   []byte
}

func (c *canned) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		r.Body.Close()
	}
	return &http.Response{
		StatusCode:    http.StatusOK,
		Header:        c.header,
		Body:          io.NopCloser(bytes.NewReader(c.body)),
		ContentLength: int64(len(c.body)),
		Request:       r,
	}, nil
}

// benchPets returns n pets with names of a typical length and every status.
func benchPets(n int) []petstore.Pet {
	statuses := []petstore.Status{"", petstore.StatusAvailable, petstore.StatusPending, petstore.StatusSold}
	pets := make([]petstore.Pet, n)
	for i := range pets {
		pets[i] = petstore.Pet{ID: int64(i + 1), NewPet: petstore.NewPet{Name: fmt.Sprintf("pet number %d", i+1), CategoryID: 3, Status: statuses[i%4]}}
	}
	return pets
}

// cannedClient returns a client whose every request is answered with v as
// JSON.
func cannedClient(b *testing.B, v any) (*client.Client, *canned) {
	body, err := json.Marshal(v)
	must(b, err)
	tr := &canned{header: http.Header{"Content-Type": {"application/json"}}, body: body}
	c, err := client.New("http://127.0.0.1:1/v1", client.WithAPIKey("key-bench"), client.WithHTTPClient(&http.Client{Transport: tr}))
	must(b, err)
	return c, tr
}

// BenchmarkCanned measures the canned transport alone: the baseline to
// subtract from the canned benchmarks below.
func BenchmarkCanned(b *testing.B) {
	_, tr := cannedClient(b, benchPets(1)[0])
	req, err := http.NewRequest(http.MethodGet, "http://127.0.0.1:1/v1/pets/1", nil)
	must(b, err)
	b.ReportAllocs()
	for b.Loop() {
		resp, _ := tr.RoundTrip(req)
		resp.Body.Close()
	}
}

// benchBoth runs read against the canned transport, answering with v, and
// against the handler on a memstore of n pets over loopback, where the
// server's allocations count too.
func benchBoth(b *testing.B, v any, n int, read func(b *testing.B, c *client.Client)) {
	b.Run("canned", func(b *testing.B) {
		c, _ := cannedClient(b, v)
		read(b, c)
	})
	b.Run("loopback", func(b *testing.B) {
		srv, store := newMemServer(b)
		addPets(b, store, n)
		read(b, newClient(b, srv.base))
	})
}

// BenchmarkGet measures one Get (see benchBoth).
func BenchmarkGet(b *testing.B) {
	benchBoth(b, benchPets(1)[0], 1, func(b *testing.B, c *client.Client) {
		b.ReportAllocs()
		for b.Loop() {
			_, err := c.Get(b.Context(), 1)
			must(b, err)
		}
	})
}

// BenchmarkAllPage measures one page of 100 pets read with All, the last
// page, so one request per iteration (see benchBoth).
func BenchmarkAllPage(b *testing.B) {
	benchBoth(b, benchPets(100), 100, func(b *testing.B, c *client.Client) {
		b.ReportAllocs()
		for b.Loop() {
			n := 0
			for _, err := range c.All(b.Context(), petstore.ListOptions{}) {
				must(b, err)
				n++
			}
			if n != 100 {
				b.Fatalf("%d pets; want 100", n)
			}
		}
	})
}
