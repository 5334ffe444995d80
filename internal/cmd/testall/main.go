// Command testall runs the tests of every module of the repository and
// says plainly what it did not test.
//
// Usage, from the repository's root:
//
//	go run ./internal/cmd/testall [go test flags, such as -race, -short, -count=1, -run X]
//
// It runs "go test -json" with the flags given over the packages of every
// module that go.work lists (run from inside one module with GOWORK=off, the
// packages of that module alone), fresh (-count=1) and with -timeout=6m
// unless the flags say otherwise. It prints the output of each test that
// fails as it fails, and of each package that fails to build or to run; a
// test still running when its package's binary stopped (a timeout's panic, a
// crash) is printed with its output and counted as failed. At the end come
// the tests skipped, grouped by reason, each group with how to include
// those tests; then the helper tests, which no run skips: a test whose skip
// message says that another test runs it ("run by", "in a subprocess") only
// does its work inside that test's subprocess, and is counted apart from
// the skips. The last line is
//
//	N passed, N failed, N skipped
//
// It exits with status 1 when a test or a package failed and, when the
// environment has CI=true, also when a PostgreSQL or a browser test was
// skipped: there, a test that did not run must not pass for one that did.
package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr, os.Getenv))
}

// run runs the tests with the go test flags in args and returns the exit
// status.
func run(args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	list := exec.Command("go", "list", "-m", "-f", "{{.Dir}}/...")
	list.Stderr = stderr
	out, err := list.Output()
	if err != nil {
		fmt.Fprintf(stderr, "testall: listing the modules (run it from the repository's root): %v\n", err)
		return 1
	}
	patterns := strings.Fields(string(out))
	test := exec.Command("go", slices.Concat([]string{"test", "-json"}, defaults, args, patterns)...)
	test.Stderr = stderr
	events, err := test.StdoutPipe()
	if err == nil {
		err = test.Start()
	}
	if err != nil {
		fmt.Fprintf(stderr, "testall: %v\n", err)
		return 1
	}
	s := newSummary(stdout)
	readErr := s.read(events)
	waitErr := test.Wait()
	if readErr != nil {
		fmt.Fprintf(stderr, "testall: reading go test's output: %v\n", readErr)
		return 1
	}
	return s.finish(waitErr != nil, getenv("CI") == "true")
}

// defaults come before the go test flags given, which take their place when
// they set the same (the last of a flag wins): -count=1, because a cached
// result would repeat a skip whose cause has since been mended, such as a
// browser installed after the first run, and -timeout=6m, which bounds each
// package's test binary: a package that needs longer on two busy cores has a
// test that hangs or one to make faster, and the timeout's panic names the
// tests still running.
var defaults = []string{"-count=1", "-timeout=6m"}

// event is one line of "go test -json" (see "go doc test2json").
type event struct {
	Action, Package, Test, Output string
}

// summary follows the events of a run and reports on it.
type summary struct {
	out                     io.Writer
	passed, failed, skipped int // the tests by outcome
	failedPackages          int
	output                  map[string][]string // by package and test: the lines so far
	skips                   map[string][]string // by reason: the tests skipped for it
	helpers                 []string            // tests that only run inside another's subprocess
	failedTests             map[string]bool     // packages with a failed test
}

// newSummary returns a summary that writes to out.
func newSummary(out io.Writer) *summary {
	return &summary{out: out, output: map[string][]string{}, skips: map[string][]string{}, failedTests: map[string]bool{}}
}

// read consumes the events of r until it ends.
func (s *summary) read(r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			// Not an event: what go test printed itself.
			fmt.Fprintln(s.out, sc.Text())
			continue
		}
		s.handle(e)
	}
	return sc.Err()
}

// handle follows one event.
func (s *summary) handle(e event) {
	id := e.Package + " " + e.Test
	switch {
	case e.Action == "build-output":
		fmt.Fprint(s.out, e.Output)
	case e.Action == "output":
		s.output[id] = append(s.output[id], e.Output)
	case e.Action == "fail" && e.Test == "":
		s.unfinished(e.Package)
		if !s.failedTests[e.Package] {
			// A package that failed without a failing test: it did not
			// build, its TestMain failed, or it timed out.
			s.failedPackages++
			fmt.Fprintf(s.out, "--- FAIL: package %s\n%s", e.Package, strings.Join(s.output[id], ""))
		}
	case e.Test == "":
	case e.Action == "pass":
		s.passed++
	case e.Action == "skip":
		reason := skipReason(s.output[id])
		if isHelper(reason) {
			s.helpers = append(s.helpers, e.Package+"."+e.Test)
		} else {
			s.skipped++
			s.skips[reason] = append(s.skips[reason], e.Package+"."+e.Test)
		}
	case e.Action == "fail":
		s.failed++
		s.failedTests[e.Package] = true
		fmt.Fprintf(s.out, "--- FAIL: %s (%s)\n%s", e.Test, e.Package, strings.Join(s.output[id], ""))
	}
	if e.Action == "pass" || e.Action == "skip" || e.Action == "fail" {
		delete(s.output, id)
	}
}

// unfinished reports, as failed, each test of pkg that started and never
// ended, with its output: when a package's binary panics or times out, the
// panic is written to the output of the tests still running, which get no
// event of their own after it.
func (s *summary) unfinished(pkg string) {
	var tests []string
	for id := range s.output {
		if p, test, _ := strings.Cut(id, " "); p == pkg && test != "" {
			tests = append(tests, test)
		}
	}
	slices.Sort(tests)
	for _, test := range tests {
		id := pkg + " " + test
		s.failed++
		s.failedTests[pkg] = true
		fmt.Fprintf(s.out, "--- FAIL: %s (%s) did not finish\n%s", test, pkg, strings.Join(s.output[id], ""))
		delete(s.output, id)
	}
}

// skipLine matches the line of a test's output that t.Skip wrote.
var skipLine = regexp.MustCompile(`^\s+[^\s:]+\.go:\d+: (.*)$`)

// skipReason returns the first line of the message of a skipped test,
// from its output.
func skipReason(lines []string) string {
	for _, l := range lines {
		if m := skipLine.FindStringSubmatch(strings.TrimRight(l, "\n")); m != nil {
			return m[1]
		}
	}
	return "no reason given"
}

// isHelper reports whether a skip message says that another test runs the
// skipped one, in a subprocess where it does its work: such a test is a
// part of that test, not one left out.
func isHelper(reason string) bool {
	return strings.Contains(reason, "run by") || strings.Contains(reason, "in a subprocess")
}

// kind names what a reason to skip is about, and how to include the tests
// skipped for it.
func kind(reason string) (what, include string) {
	switch {
	case strings.Contains(reason, "-short"):
		return "", "run without -short"
	case strings.Contains(reason, "PETSTORE_POSTGRES_URL"):
		return "PostgreSQL", "start PostgreSQL and run PETSTORE_POSTGRES_URL='postgres://postgres@127.0.0.1:5432/test?sslmode=disable' go run ./internal/cmd/testall"
	case strings.Contains(reason, "initdb") || strings.Contains(reason, "PostgreSQL"):
		return "PostgreSQL", "install PostgreSQL's server binaries (initdb, pg_ctl), e.g. apt-get install postgresql"
	case strings.Contains(strings.ToLower(reason), "chromium") || strings.Contains(strings.ToLower(reason), "browser"):
		return "browser", "install Chromium (apt-get install chromium) or set PETSTORE_CHROMIUM to a browser"
	}
	return "", ""
}

// finish reports the skips, the most common reason first, and the
// helpers, then the totals, and returns the exit status: 1 when a test or a
// package failed (or go test did, as goFailed says), or, under ci, when a
// PostgreSQL or browser test was skipped.
func (s *summary) finish(goFailed, ci bool) int {
	fmt.Fprintln(s.out)
	reasons := slices.Sorted(maps.Keys(s.skips))
	slices.SortStableFunc(reasons, func(a, b string) int { return cmp.Compare(len(s.skips[b]), len(s.skips[a])) })
	mustRun := 0
	for _, reason := range reasons {
		tests := s.skips[reason]
		what, include := kind(reason)
		if what != "" {
			what += " "
			mustRun += len(tests)
		}
		fmt.Fprintf(s.out, "%d %s%s skipped: %s (%s)\n", len(tests), what, plural(len(tests), "test"), reason, examples(tests))
		if include != "" {
			fmt.Fprintf(s.out, "\tto include them: %s\n", include)
		}
	}
	if n := len(s.helpers); n > 0 {
		fmt.Fprintf(s.out, "%d helper %s, run by other tests in subprocesses, not counted (%s)\n", n, plural(n, "test"), examples(s.helpers))
	}
	if s.failedPackages > 0 {
		fmt.Fprintf(s.out, "%d %s failed to build or to run (see above)\n", s.failedPackages, plural(s.failedPackages, "package"))
	}
	status := 0
	switch {
	case s.failed > 0 || s.failedPackages > 0 || goFailed:
		status = 1
	case ci && mustRun > 0:
		fmt.Fprintf(s.out, "CI=true: %d PostgreSQL or browser tests were skipped, and CI must run them\n", mustRun)
		status = 1
	}
	fmt.Fprintf(s.out, "%d passed, %d failed, %d skipped\n", s.passed, s.failed, s.skipped)
	return status
}

// examples returns the first three of tests, sorted, and "…" if there are
// more.
func examples(tests []string) string {
	tests = slices.Sorted(slices.Values(tests))
	if len(tests) > 3 {
		return strings.Join(tests[:3], ", ") + ", …"
	}
	return strings.Join(tests, ", ")
}

// plural returns noun, with an s unless n is 1.
func plural(n int, noun string) string {
	if n == 1 {
		return noun
	}
	return noun + "s"
}
