package petstoretest

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
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

// runClause runs test as the subtest name of t; when it fails, the subtest
// names the clause and its sentence.
func runClause(t *testing.T, name, sentence string, test func(r reporter)) {
	t.Helper()
	t.Run(name, func(t *testing.T) {
		t.Helper()
		defer func() {
			if t.Failed() {
				t.Errorf("petstoretest: clause %q failed: %s", name, sentence)
			}
		}()
		test(t)
	})
}

// checkClause runs test on a recorder and returns its failures as an
// error, or nil when there were none. A panic in test is a failure.
func checkClause(name, sentence string, test func(r reporter)) error {
	r := &recorder{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() {
			if v := recover(); v != nil {
				r.Errorf("panic: %v", v)
			}
		}()
		test(r)
	}()
	<-done
	if len(r.failures) == 0 {
		return nil
	}
	return fmt.Errorf("petstoretest: clause %q failed: %s\n%s", name, sentence, strings.Join(r.failures, "\n"))
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

func (r *recorder) FailNow() { runtime.Goexit() }

func (r *recorder) Failed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.failures) > 0
}
