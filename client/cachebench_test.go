package client_test

import (
	"fmt"
	"testing"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/client"
)

// BenchmarkETagCache compares, in one run, Get and a List of a full page
// of 20 and of 100 pets against the handler on memstore over loopback,
// repeated with the default client, which asks again with If-None-Match,
// and with WithETagCache(0), which reads every answer in full.
func BenchmarkETagCache(b *testing.B) {
	srv, store := newMemServer(b)
	pets := addPets(b, store, 100)
	for _, cache := range []struct {
		name string
		opts []client.Option
	}{
		{"cache", nil},
		{"nocache", []client.Option{client.WithETagCache(0)}},
	} {
		c := newClient(b, srv.base, cache.opts...)
		b.Run("Get/"+cache.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Get(b.Context(), pets[0].ID); err != nil {
					b.Fatal(err)
				}
			}
		})
		for _, n := range []int{20, 100} {
			b.Run(fmt.Sprintf("List%d/%s", n, cache.name), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					got, err := c.List(b.Context(), petstore.ListOptions{Limit: n})
					if err != nil || len(got) != n {
						b.Fatalf("List: %d pets, %v; want %d", len(got), err, n)
					}
				}
			})
		}
	}
}
