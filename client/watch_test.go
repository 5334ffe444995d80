package client_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/client"
)

// watched collects what a Watch yields, n pets or until its first error,
// on a goroutine of its own, and sends them on the returned channel.
func watched(ctx context.Context, c *client.Client, opts petstore.ListOptions) <-chan result {
	ch := make(chan result)
	go func() {
		defer close(ch)
		for p, err := range c.Watch(ctx, opts) {
			select {
			case ch <- result{p, err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return ch
}

type result struct {
	pet petstore.Pet
	err error
}

// take receives n pets from ch, failing the test on an error.
func take(t *testing.T, ch <-chan result, n int) []petstore.Pet {
	t.Helper()
	var pets []petstore.Pet
	for range n {
		select {
		case r, ok := <-ch:
			if !ok || r.err != nil {
				t.Fatalf("after %d pets: %v (open %v)", len(pets), r.err, ok)
			}
			pets = append(pets, r.pet)
		case <-time.After(10 * time.Second):
			t.Fatalf("after %d pets: no pet for 10 seconds", len(pets))
		}
	}
	return pets
}

// Watch yields the stored pets, then those created, and resumes after the
// last one it yielded when the connection breaks: none missed, none twice.
func TestWatchResumes(t *testing.T) {
	var w waits
	s, store := newMemServer(t)
	c := newClient(t, s.base, w.option())
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	add := func(name string, st petstore.Status) petstore.Pet {
		p, _, err := store.Add(ctx, petstore.NewPet{Name: name, CategoryID: 1, Status: st}, petstore.AddOptions{})
		must(t, err)
		return p
	}
	first := add("first", petstore.StatusSold)
	var want []petstore.Pet
	for i := range 3 {
		want = append(want, add(fmt.Sprint("stored ", i), petstore.StatusAvailable))
	}
	add("other status", petstore.StatusPending)
	ch := watched(ctx, c, petstore.ListOptions{After: first.ID, Status: petstore.StatusAvailable, Limit: 1})
	got := take(t, ch, 3)
	s.CloseClientConnections()
	for i := range 3 {
		want = append(want, add(fmt.Sprint("created ", i), petstore.StatusAvailable))
	}
	got = append(got, take(t, ch, 3)...)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	gets := s.requestsOf(http.MethodGet)
	if len(gets) < 2 {
		t.Fatalf("%d requests, want a reconnection", len(gets))
	}
	if got, want := gets[len(gets)-1].Header.Get("Last-Event-Id"), fmt.Sprint(want[2].ID); got != want {
		t.Errorf("the reconnection's Last-Event-ID is %q, want %q", got, want)
	}
	if got := gets[0].Header.Get("Last-Event-Id"); got != "" {
		t.Errorf("the first request has Last-Event-ID %q, want none", got)
	}
}

// Watch stops at an answer that a reconnection cannot mend, and at the end
// of its context; it waits as Retry-After asks at a 429.
func TestWatchStops(t *testing.T) {
	s, store := newMemServer(t, petstore.WithWatch(petstore.Watch{MaxStreamsPerPrincipal: 1}))
	addPets(t, store, 1)

	r := <-watched(t.Context(), newClient(t, s.base, client.WithAPIKey("wrong")), petstore.ListOptions{})
	if !errors.Is(r.err, petstore.ErrUnauthorized) || s.count(http.MethodGet) != 1 {
		t.Errorf("with a wrong key: %v after %d requests, want ErrUnauthorized after 1", r.err, s.count(http.MethodGet))
	}

	ctx, cancel := context.WithCancel(t.Context())
	holder := watched(ctx, newClient(t, s.base), petstore.ListOptions{})
	take(t, holder, 1) // it holds the principal's one stream
	var w waits
	waiting := newClient(t, s.base, w.option())
	ctx2, cancel2 := context.WithCancel(t.Context())
	defer cancel2()
	ch := watched(ctx2, waiting, petstore.ListOptions{})
	for len(w.get()) < 2 {
		time.Sleep(time.Millisecond)
	}
	if d := w.get()[0]; d < time.Second || d > 2*time.Second {
		t.Errorf("the wait after a 429 with Retry-After: 1 is %v, want 1 to 1.5 seconds", d)
	}
	cancel2()
	for r := range ch {
		if !errors.Is(r.err, context.Canceled) {
			t.Errorf("after its context ended, Watch yielded %v, %v; want an error wrapping context.Canceled", r.pet, r.err)
		}
	}
	cancel()
	for range holder {
	}
}

// Watch refuses events that are not the watch's pets in ascending order.
func TestWatchBadEvents(t *testing.T) {
	tests := []struct{ name, events string }{
		{"descending", "id: 2\ndata: {\"id\":2,\"name\":\"b\",\"categoryId\":1}\n\nid: 1\ndata: {\"id\":1,\"name\":\"a\",\"categoryId\":1}\n\n"},
		{"id differs", "id: 2\ndata: {\"id\":2,\"name\":\"b\",\"categoryId\":1}\n\nid: 4\ndata: {\"id\":3,\"name\":\"a\",\"categoryId\":1}\n\n"},
		{"not a pet", "id: 2\ndata: {\"id\":2,\"name\":\"b\",\"categoryId\":1}\n\nid: 3\ndata: [3]\n\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := hostile(t, func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				fmt.Fprint(w, ": hello\n\n"+tt.events)
			})
			var got []petstore.Pet
			var err error
			for p, e := range newClient(t, srv.URL).Watch(t.Context(), petstore.ListOptions{}) {
				if err = e; err != nil {
					break
				}
				got = append(got, p)
			}
			if !errors.Is(err, client.ErrBadResponse) || len(got) != 1 || got[0].ID != 2 {
				t.Errorf("got %v, then %v; want the pet 2, then ErrBadResponse", got, err)
			}
		})
	}
}
