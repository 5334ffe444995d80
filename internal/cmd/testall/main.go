// Command testall runs the tests of every module of the repository and
// says plainly what it did not test.
//
// Usage, from the repository's root:
//
//	go run ./internal/cmd/testall [go test flags, such as -race, -short, -count=1, -run X]
//
// It runs "go test -json" with the flags given over the packages of every
// module that go.work lists, prints the output of each test that fails as
// it fails (and of each package that fails to build or to run), and ends
// with a line of the form
//
//	N passed, N failed, N skipped
//
// followed, for the skipped tests, by their reasons, grouped, each with how
// to include those tests. It exits with status 1 when a test or a package
// failed and, when the environment has CI=true, also when a PostgreSQL or a
// browser test was skipped: there, a test that did not run must not pass
// for one that did.
package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
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
	packages := strings.Fields(string(out))
	test := exec.Command("go", append(append([]string{"test", "-json"}, args...), packages...)...)
	test.Stderr = stderr
	events, err := test.StdoutPipe()
	if err != nil {
		fmt.Fprintf(stderr, "testall: %v\n", err)
		return 1
	}
	if err := test.Start(); err != nil {
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

// event is one line of "go test -json" (see "go doc test2json").
type event struct {
	Action     string
	Package    string
	ImportPath string // of build-output and build-fail
	Test       string
	Output     string
}

// summary follows the events of a run and reports on it.
type summary struct {
	out                     io.Writer
	passed, failed, skipped int
	failedPackages          int
	output                  map[string][]string // by package and test: the lines so far
	skips                   map[string][]string // by reason: the tests skipped for it
	failedTests             map[string]bool     // packages with a failed test
}

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
	switch e.Action {
	case "build-output":
		fmt.Fprint(s.out, e.Output)
	case "output":
		s.output[id] = append(s.output[id], e.Output)
	case "pass":
		if e.Test != "" {
			s.passed++
		}
		delete(s.output, id)
	case "skip":
		if e.Test != "" {
			s.skipped++
			reason := skipReason(s.output[id])
			s.skips[reason] = append(s.skips[reason], e.Package+"."+e.Test)
		}
		delete(s.output, id)
	case "fail":
		if e.Test != "" {
			s.failed++
			s.failedTests[e.Package] = true
			fmt.Fprintf(s.out, "--- FAIL: %s (%s)\n%s", e.Test, e.Package, strings.Join(s.output[id], ""))
		} else if !s.failedTests[e.Package] {
			// A package that failed without a failing test: it did not
			// build, its TestMain failed, or it timed out.
			s.failedPackages++
			fmt.Fprintf(s.out, "--- FAIL: package %s\n%s", e.Package, strings.Join(s.output[id], ""))
		}
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

// finish prints the summary and returns the exit status: 1 when a test or
// a package failed (or go test did, as goFailed says), or, under ci, when
// a PostgreSQL or browser test was skipped.
func (s *summary) finish(goFailed, ci bool) int {
	fmt.Fprintf(s.out, "\n%d passed, %d failed, %d skipped\n", s.passed, s.failed, s.skipped)
	if s.failedPackages > 0 {
		fmt.Fprintf(s.out, "%d packages failed to build or to run (see above)\n", s.failedPackages)
	}
	type group struct {
		reason string
		tests  []string
	}
	var groups []group
	for reason, tests := range s.skips {
		groups = append(groups, group{reason, tests})
	}
	slices.SortFunc(groups, func(a, b group) int {
		return cmp.Or(cmp.Compare(len(b.tests), len(a.tests)), cmp.Compare(a.reason, b.reason))
	})
	mustRun := 0
	for _, g := range groups {
		what, include := kind(g.reason)
		if what != "" {
			what += " "
			mustRun += len(g.tests)
		}
		slices.Sort(g.tests)
		examples := g.tests[:min(3, len(g.tests))]
		more := ""
		if len(g.tests) > len(examples) {
			more = ", …"
		}
		noun := "tests"
		if len(g.tests) == 1 {
			noun = "test"
		}
		fmt.Fprintf(s.out, "%d %s%s skipped: %s (%s%s)\n", len(g.tests), what, noun, g.reason, strings.Join(examples, ", "), more)
		if include != "" {
			fmt.Fprintf(s.out, "\tto include them: %s\n", include)
		}
	}
	switch {
	case s.failed > 0 || s.failedPackages > 0 || goFailed:
		return 1
	case ci && mustRun > 0:
		fmt.Fprintf(s.out, "CI=true: %d PostgreSQL or browser tests were skipped, and CI must run them\n", mustRun)
		return 1
	}
	return 0
}
