// Package watchbench measures how soon a pet created through one instance
// reaches a watch stream of another: two handlers, each on a Store value of
// its own over the same data, served on loopback.
package watchbench

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"slices"
	"sync"
	"time"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/client"
)

// A Result is what Across measured: the delivery latencies, from the answer
// to a create on A to the event's arrival on B's stream.
type Result struct {
	Pets          int
	P50, P99, Max time.Duration
}

// String formats r as one line.
func (r Result) String() string {
	return fmt.Sprintf("%d pets: delivery p50 %v, p99 %v, max %v", r.Pets, r.P50.Round(10*time.Microsecond),
		r.P99.Round(10*time.Microsecond), r.Max.Round(10*time.Microsecond))
}

const key = "watchbench-key-0123456789"

// serve serves a handler on s on loopback until ctx ends, and returns a
// client of it.
func serve(ctx context.Context, s petstore.Store) (*client.Client, error) {
	h, err := petstore.New(petstore.WithStore(s), petstore.WithAuthenticator(petstore.APIKeys(key)))
	if err != nil {
		return nil, err
	}
	srv := httptest.NewServer(h)
	context.AfterFunc(ctx, srv.Close)
	return client.New(srv.URL+petstore.DefaultBasePath, client.WithAPIKey(key))
}

// Across creates n pets at perSecond through a handler on a while a stream
// of a handler on b watches, and returns the delivery latencies. It fails
// when the stream misses a pet, repeats one, or sends them out of order, or
// when a pet has not arrived 10 seconds after the last create.
func Across(ctx context.Context, a, b petstore.Store, n int, perSecond float64) (Result, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ca, err := serve(ctx, a)
	if err != nil {
		return Result{}, err
	}
	cb, err := serve(ctx, b)
	if err != nil {
		return Result{}, err
	}
	start, err := b.List(ctx, petstore.ListOptions{})
	if err != nil {
		return Result{}, err
	}
	var after int64
	if len(start) > 0 {
		after = start[len(start)-1].ID
	}

	var mu sync.Mutex
	created := map[int64]time.Time{}
	var seen []int64
	arrived := map[int64]time.Time{}
	all := make(chan struct{})
	watching := make(chan error, 1)
	go func() {
		first := true
		for pet, err := range cb.Watch(ctx, petstore.ListOptions{After: after}) {
			if err != nil {
				watching <- err
				return
			}
			now := time.Now()
			mu.Lock()
			seen = append(seen, pet.ID)
			arrived[pet.ID] = now
			done := len(seen) == n
			mu.Unlock()
			if done && first {
				first = false
				close(all)
			}
		}
	}()
	time.Sleep(100 * time.Millisecond) // the stream opens

	tick := time.NewTicker(time.Duration(float64(time.Second) / perSecond))
	defer tick.Stop()
	for i := range n {
		<-tick.C
		p, _, err := ca.Add(ctx, petstore.NewPet{Name: fmt.Sprintf("pet %d", i), CategoryID: 1}, petstore.AddOptions{})
		if err != nil {
			return Result{}, err
		}
		now := time.Now()
		mu.Lock()
		created[p.ID] = now
		mu.Unlock()
	}
	select {
	case <-all:
	case err := <-watching:
		return Result{}, err
	case <-time.After(10 * time.Second):
	}
	mu.Lock()
	defer mu.Unlock()
	want := make([]int64, 0, n)
	for id := range created {
		want = append(want, id)
	}
	slices.Sort(want)
	if !slices.Equal(want, seen) {
		return Result{}, fmt.Errorf("created %d pets %v, the stream sent %d: %v", len(want), want, len(seen), seen)
	}
	lat := make([]time.Duration, 0, n)
	for _, id := range want {
		lat = append(lat, max(arrived[id].Sub(created[id]), 0))
	}
	slices.Sort(lat)
	if len(lat) == 0 {
		return Result{}, errors.New("no pets")
	}
	return Result{Pets: n, P50: lat[len(lat)/2], P99: lat[(len(lat)*99+99)/100-1], Max: lat[len(lat)-1]}, nil
}
