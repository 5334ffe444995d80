package petstoretest

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// A reporter is what a clause reports its failures to: the subtest under
// TestStore, TestDurability and TestServer, a recorder under CheckStore,
// CheckDurability and CheckServer. Errorf and Failed may be called from any
// goroutine, Fatalf and FailNow only from the one that runs the clause.
type reporter interface {
	Context() context.Context
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
	FailNow()
	Failed() bool
}

// A clause is one rule of a suite, its sentence and the test that enforces
// it on the state T of one subtest.
type clause[T any] struct {
	name, sentence string
	test           func(T)
}

// testClauses runs each of cases with run as a subtest of t, named after the
// clause; when it fails, the subtest names the clause and its sentence.
func testClauses[T any](t *testing.T, cases []clause[T], run func(reporter, clause[T])) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Helper()
			defer func() {
				if t.Failed() {
					t.Errorf("petstoretest: clause %q failed: %s", c.name, c.sentence)
				}
			}()
			run(t, c)
		})
	}
}

// checkClauses runs each of cases with run on a recorder and returns an
// error for each clause that failed, joined, or nil. A panic is a failure.
func checkClauses[T any](cases []clause[T], run func(reporter, clause[T])) error {
	var errs []error
	for _, c := range cases {
		r := &recorder{}
		var wg sync.WaitGroup // run may end its goroutine with FailNow
		wg.Go(func() {
			defer func() {
				if v := recover(); v != nil {
					r.Errorf("panic: %v", v)
				}
			}()
			run(r, c)
		})
		wg.Wait()
		if len(r.failures) > 0 {
			errs = append(errs, fmt.Errorf("petstoretest: clause %q failed: %s\n%s", c.name, c.sentence, strings.Join(r.failures, "\n")))
		}
	}
	return errors.Join(errs...)
}

// A recorder records the failures of one clause for the Check functions.
type recorder struct {
	mu       sync.Mutex
	failures []string
}

func (r *recorder) Context() context.Context { return context.Background() }

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failures = append(r.failures, fmt.Sprintf(format, args...))
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	r.FailNow()
}

// FailNow ends the clause failed, as testing.T's does, even when nothing
// was reported before it.
func (r *recorder) FailNow() {
	r.mu.Lock()
	if len(r.failures) == 0 {
		r.failures = append(r.failures, "the clause stopped without saying why")
	}
	r.mu.Unlock()
	runtime.Goexit()
}

func (r *recorder) Failed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.failures) > 0
}

// diff reports a failure to r when got differs from want, showing the
// difference, and tells whether they were equal. Nil and empty slices and
// maps are equal, and strings are compared whole, to show both values.
func diff(r reporter, what string, want, got any) bool {
	if d := gocmp.Diff(want, got, cmpopts.EquateEmpty(), gocmp.Comparer(func(a, b string) bool { return a == b })); d != "" {
		r.Errorf("%s (-want +got):\n%s", what, d)
		return false
	}
	return true
}
