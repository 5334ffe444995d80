package loadtest

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/petstore-go/petstore"
)

// maxReports caps the discrepancies of each kind that verify reports.
const maxReports = 10

// verify checks the store against the pets acknowledged, by ID: the full
// listing, paged through its Link headers, holds exactly them, once each,
// as created; so does the listing under each status for the pets with that
// status; and each is found by ID as created. It returns the number of
// pets that passed every check.
func (cl *client) verify(ctx context.Context, t testing.TB, clients int, acked map[int64]petstore.NewPet) int {
	t.Helper()
	r := &reporter{t: t, counts: map[string]int{}}
	var mu sync.Mutex
	bad := map[int64]bool{} // the acknowledged pets that failed a check
	for _, status := range statuses {
		target := cl.base + "?limit=" + fmt.Sprint(petstore.MaxPageSize)
		where := "the full listing"
		if status != "" {
			target += "&status=" + string(status)
			where = "the listing under its status"
		}
		var last int64
		var page []petstore.Pet
		seen := make(map[int64]bool)
		for target != "" {
			var err error
			page, target, err = cl.list(ctx, target, page[:0])
			if err != nil {
				t.Fatalf("loadtest: %v", verifyError(ctx, err))
			}
			for _, got := range page {
				if got.ID <= last {
					r.report("order", "listing with status %q: pet %d follows pet %d", status, got.ID, last)
				}
				last = got.ID
				want, ok := acked[got.ID]
				switch {
				case !ok:
					r.report("unacknowledged", "listing with status %q holds pet %+v, whose create was not acknowledged", status, got)
				case want != got.NewPet:
					r.report("fields", "listing with status %q holds pet %d as %+v; it was created as %+v", status, got.ID, got.NewPet, want)
				case status != "" && got.Status != status:
					r.report("filter", "listing with status %q holds pet %+v", status, got)
				case seen[got.ID]:
					r.report("duplicate", "listing with status %q holds pet %d more than once", status, got.ID)
				default:
					seen[got.ID] = true
					continue
				}
				if ok {
					bad[got.ID] = true
				}
				seen[got.ID] = true
			}
		}
		for id, p := range acked {
			if !seen[id] && (status == "" || p.Status == status) {
				r.report("missing from "+where, "pet %d, acknowledged as %+v, is missing from %s", id, p, where)
				bad[id] = true
			}
		}
	}

	ids := make(chan int64)
	var wg sync.WaitGroup
	var failed atomic.Bool
	for range clients {
		wg.Go(func() {
			for id := range ids {
				got, err := cl.get(ctx, id)
				switch {
				case err != nil:
					if !failed.Swap(true) {
						t.Errorf("loadtest: %v", verifyError(ctx, err))
					}
				case got.ID != id || got.NewPet != acked[id]:
					r.report("get", "GET pets/%d answered %+v; it was created as %+v", id, got, acked[id])
					mu.Lock()
					bad[id] = true
					mu.Unlock()
				}
			}
		})
	}
	for id := range acked {
		if ctx.Err() != nil || failed.Load() {
			break
		}
		ids <- id
	}
	close(ids)
	wg.Wait()
	if failed.Load() {
		t.FailNow()
	}
	if err := ctx.Err(); err != nil {
		t.Fatalf("loadtest: %v", verifyError(ctx, err))
	}
	return len(acked) - len(bad)
}

// verifyError describes the failure of a request of the verification.
func verifyError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("the verification did not finish in time; lower %s or raise the bound: %w", EnvCreates, err)
	}
	return fmt.Errorf("verifying: %w", err)
}

// reporter reports discrepancies, at most maxReports of each kind, and
// counts the rest. It is safe for concurrent use.
type reporter struct {
	t      testing.TB
	mu     sync.Mutex
	counts map[string]int
}

func (r *reporter) report(kind, format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.counts[kind]++
	switch n := r.counts[kind]; {
	case n <= maxReports:
		r.t.Errorf("loadtest: "+format, args...)
	case n == maxReports+1:
		r.t.Errorf("loadtest: more %s discrepancies follow; only the first %d are reported", kind, maxReports)
	}
}
