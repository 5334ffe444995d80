package petstoretest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/petstore-go/petstore"
)

// canceled returns a context that is already canceled.
func (st *storeT) canceled() context.Context {
	ctx, cancel := context.WithCancel(st.ctx)
	cancel()
	return ctx
}

// wantWrapping describes the outcome that a call with a done context must
// have, and what it had instead.
func wantWrapping(target error, v any, err error) (want, got string) {
	want = fmt.Sprintf("an error wrapping %v", target)
	if errors.Is(err, target) {
		return want, want
	}
	return want, outcome(v, err)
}

func testAddCanceled(st *storeT) {
	p := petstore.NewPet{Name: "canceled", CategoryID: 1, Status: petstore.StatusAvailable}
	pet, _, err := st.s.Add(st.canceled(), p, petstore.AddOptions{})
	want, got := wantWrapping(context.Canceled, pet, err)
	st.diff(fmt.Sprintf("Add(canceled ctx, %+v)", p), want, got)
}

func testGetCanceled(st *storeT) {
	id := st.addN(1)[0].ID
	pet, err := st.s.Get(st.canceled(), id)
	want, got := wantWrapping(context.Canceled, pet, err)
	st.diff(fmt.Sprintf("Get(canceled ctx, %d) of a pet that exists", id), want, got)
}

func testListCanceled(st *storeT) {
	st.addN(3)
	pets, err := st.s.List(st.canceled(), petstore.ListOptions{})
	want, got := wantWrapping(context.Canceled, pets, err)
	st.diff("List(canceled ctx, ListOptions{}) of a store that holds pets", want, got)
}

func testDeadlineExceeded(st *storeT) {
	id := st.addN(3)[0].ID
	ctx, cancel := context.WithDeadline(st.ctx, time.Unix(0, 0))
	defer cancel()

	want := map[string]string{}
	got := map[string]string{}
	record := func(call string, v any, err error) {
		want[call], got[call] = wantWrapping(context.DeadlineExceeded, v, err)
	}
	p, _, err := st.s.Add(ctx, petstore.NewPet{Name: "expired", CategoryID: 1}, petstore.AddOptions{})
	record("Add", p, err)
	p, err = st.s.Get(ctx, id)
	record(fmt.Sprintf("Get(%d)", id), p, err)
	pets, err := st.s.List(ctx, petstore.ListOptions{})
	record("List", pets, err)
	st.diff("calls with a context whose deadline has passed", want, got)
}

func testConcurrentUse(st *storeT) {
	const workers, rounds = 8, 16
	var (
		mu    sync.Mutex
		added = st.addN(8)
		wg    sync.WaitGroup
		start = make(chan struct{})
	)
	for w := range workers {
		wg.Go(func() {
			<-start
			for i := range rounds {
				p := petstore.NewPet{Name: fmt.Sprintf("worker %d pet %d", w, i), CategoryID: int64(i + 1), Status: statuses[(w+i)%len(statuses)]}
				got, _, err := st.s.Add(st.ctx, p, petstore.AddOptions{})
				if err != nil {
					st.errorf("Add(%+v) from worker %d: %v", p, w, err)
					return
				}
				mu.Lock()
				added = append(added, got)
				mu.Unlock()

				if back, err := st.s.Get(st.ctx, got.ID); err != nil {
					st.errorf("Get(%d) of a pet that worker %d just added: %v", got.ID, w, err)
				} else if back != got {
					st.errorf("Get(%d) from worker %d returned %+v; Add returned %+v", got.ID, w, back, got)
				}

				opts := petstore.ListOptions{Status: statuses[i%len(statuses)], After: got.ID / 2, Limit: 1 + i%4}
				page, err := st.s.List(st.ctx, opts)
				if err != nil {
					st.errorf("List(%+v) from worker %d: %v", opts, w, err)
					continue
				}
				if !ascending(page) {
					st.errorf("List(%+v) from worker %d: IDs not ascending: %v", opts, w, ids(page))
				}
				if len(page) > opts.Limit {
					st.errorf("List(%+v) from worker %d returned %d pets", opts, w, len(page))
				}
				for _, q := range page {
					if q.ID <= opts.After || opts.Status != "" && q.Status != opts.Status {
						st.errorf("List(%+v) from worker %d returned %+v, which it does not select", opts, w, q)
					}
				}
			}
		})
	}
	close(start)
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	st.diff("List after concurrent Adds, Gets and Lists", byID(added), st.list(petstore.ListOptions{}))
}
