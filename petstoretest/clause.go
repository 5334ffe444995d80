package petstoretest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"regexp"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
)

// A clause is one rule that a suite checks: its name, the sentence of the
// contract that it enforces and the earlier clauses whose checks it relies
// on, so that when one of them fails this one is likely to fail for the
// same reason.
type clause struct {
	name, sentence string
	needs          []string
}

// runClauses runs each case in order with run and returns the errors of
// those that failed, joined. run is told the simplest earlier clause that
// failed and that the case relies on, directly or through others, or "".
// tb, when it is not nil, is the test that runs the cases as subtests.
func runClauses[C any](tb testing.TB, cases []C, info func(C) clause, run func(c C, failedNeed string) error) error {
	if tb != nil {
		tb.Helper()
	}
	index := map[string]int{}
	blame := map[string]string{} // the simplest failed clause that each relies on, itself included
	var errs []error
	for i, c := range cases {
		cl := info(c)
		index[cl.name] = i
		relied := ""
		for _, n := range cl.needs {
			if b := blame[n]; b != "" && (relied == "" || index[b] < index[relied]) {
				relied = b
			}
		}
		blame[cl.name] = relied
		if err := run(c, relied); err != nil {
			errs = append(errs, err)
			blame[cl.name] = cmp.Or(relied, cl.name)
		}
	}
	return errors.Join(errs...)
}

// runClause runs check on a new clauseT and returns the failures that it
// recorded as a *clauseError, or nil when there were none. A panic in check
// is a failure of the clause.
func runClause(ctx context.Context, c clause, failedNeed string, check func(ct *clauseT)) error {
	ct := &clauseT{ctx: ctx}
	func() {
		defer func() {
			if r := recover(); r != nil && r != errStopClause {
				ct.Errorf("panic: %v\n%s", r, debug.Stack())
			}
		}()
		check(ct)
	}()
	if len(ct.failures) == 0 {
		return nil
	}
	return &clauseError{clause: c, failures: ct.failures, failedNeed: failedNeed}
}

// report fails t, the subtest that ran a clause, with err, and says how to
// run the clause alone. Both it and its caller are helpers, so that the
// failure is reported at the line of the test that called the suite.
func report(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Errorf("%v\nrun this clause alone: %s", err, runAlone(t.Name()))
	}
}

// errStopClause is what FailNow panics with to stop a clause.
var errStopClause = errors.New("petstoretest: clause stopped")

// A clauseT records the failures of one clause while it runs. Errorf and
// Failed may be called from any goroutine, Fatalf and FailNow only from the
// one that runs the clause.
type clauseT struct {
	ctx      context.Context
	mu       sync.Mutex
	failures []string
}

// Context returns the context of the clause's calls.
func (ct *clauseT) Context() context.Context { return ct.ctx }

// Errorf records a failure and goes on.
func (ct *clauseT) Errorf(format string, args ...any) {
	ct.mu.Lock()
	defer ct.mu.Unlock()
	ct.failures = append(ct.failures, clip(fmt.Sprintf(format, args...)))
}

// Fatalf records a failure and stops the clause.
func (ct *clauseT) Fatalf(format string, args ...any) {
	ct.Errorf(format, args...)
	ct.FailNow()
}

// FailNow stops the clause.
func (ct *clauseT) FailNow() { panic(errStopClause) }

// Failed reports whether a failure was recorded.
func (ct *clauseT) Failed() bool {
	ct.mu.Lock()
	defer ct.mu.Unlock()
	return len(ct.failures) > 0
}

// maxShown is how many failures of one clause a report shows; it counts
// the rest. maxLines is how many lines of one failure it shows.
const (
	maxShown = 3
	maxLines = 25
)

// A clauseError reports the failures of one clause.
type clauseError struct {
	clause
	failures []string
	// failedNeed is the simplest failed clause that this one relies on,
	// or "": its failures are then most likely the same bug seen again,
	// and are not shown.
	failedNeed string
}

func (e *clauseError) Error() string {
	if e.failedNeed != "" {
		return fmt.Sprintf("petstoretest: clause %q fails too (%s not shown), likely because clause %q failed, which it relies on: fix that first",
			e.name, failures(len(e.failures)), e.failedNeed)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "petstoretest: clause %q failed: %s", e.name, e.sentence)
	for _, f := range e.failures[:min(len(e.failures), maxShown)] {
		b.WriteString("\n" + f)
	}
	if n := len(e.failures) - maxShown; n > 0 {
		fmt.Fprintf(&b, "\nand %d more, not shown", n)
	}
	return b.String()
}

// runAlone returns the go test command that runs the subtest named name (as
// testing.T.Name gives it) and nothing else.
func runAlone(name string) string {
	parts := strings.Split(name, "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	return "go test -run '" + strings.Join(parts, "/") + "'"
}

// failures returns "1 failure" or "n failures".
func failures(n int) string {
	if n == 1 {
		return "1 failure"
	}
	return fmt.Sprintf("%d failures", n)
}

// clip returns msg cut to maxLines lines.
func clip(msg string) string {
	lines := strings.Split(msg, "\n")
	if len(lines) <= maxLines {
		return msg
	}
	return strings.Join(lines[:maxLines-1], "\n") + fmt.Sprintf("\n… %d more lines", len(lines)-maxLines+1)
}
