package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// stream is what go test -json prints for package m, with a passing test,
// a failing one, a subtest and a helper run in a subprocess; package m/none
// with no test files; package n, with three tests skipped for want of
// PostgreSQL, one skipped in -short mode and a helper; and package s, which
// does not build.
const stream = `{"Action":"run","Package":"m","Test":"TestOK"}
{"Action":"output","Package":"m","Test":"TestOK","Output":"=== RUN   TestOK\n"}
{"Action":"pass","Package":"m","Test":"TestOK","Elapsed":0.1}
{"Action":"run","Package":"m","Test":"TestBad"}
{"Action":"output","Package":"m","Test":"TestBad","Output":"=== RUN   TestBad\n"}
{"Action":"output","Package":"m","Test":"TestBad","Output":"    m_test.go:9: got 1, want 2\n"}
{"Action":"fail","Package":"m","Test":"TestBad"}
{"Action":"run","Package":"m","Test":"TestParent/sub"}
{"Action":"pass","Package":"m","Test":"TestParent/sub"}
{"Action":"pass","Package":"m","Test":"TestParent"}
{"Action":"output","Package":"m","Test":"TestHarnessStore","Output":"    harness_test.go:35: helper run in a subprocess by TestStoreCatchesBrokenStores\n"}
{"Action":"skip","Package":"m","Test":"TestHarnessStore"}
{"Action":"fail","Package":"m","Elapsed":1.25}
{"Action":"output","Package":"m/none","Output":"?   \tm/none\t[no test files]\n"}
{"Action":"skip","Package":"m/none","Elapsed":0}
{"Action":"output","Package":"n","Test":"TestPG1","Output":"    pgtest.go:24: PETSTORE_POSTGRES_URL is not set, so the PostgreSQL tests cannot run. Start a server and set it, e.g.\n"}
{"Action":"output","Package":"n","Test":"TestPG1","Output":"        \tPETSTORE_POSTGRES_URL=... go test ./...\n"}
{"Action":"skip","Package":"n","Test":"TestPG1"}
{"Action":"output","Package":"n","Test":"TestPG2","Output":"    pgtest.go:24: PETSTORE_POSTGRES_URL is not set, so the PostgreSQL tests cannot run. Start a server and set it, e.g.\n"}
{"Action":"skip","Package":"n","Test":"TestPG2"}
{"Action":"output","Package":"n","Test":"TestPG3","Output":"    pgtest.go:24: PETSTORE_POSTGRES_URL is not set, so the PostgreSQL tests cannot run. Start a server and set it, e.g.\n"}
{"Action":"skip","Package":"n","Test":"TestPG3"}
{"Action":"output","Package":"n","Test":"TestSlow","Output":"    slow_test.go:5: skipping a test that runs the server in -short mode\n"}
{"Action":"skip","Package":"n","Test":"TestSlow"}
{"Action":"output","Package":"n","Test":"TestLoadServer","Output":"    load_test.go:208: the server process of TestLoadTwoProcesses, run by it\n"}
{"Action":"skip","Package":"n","Test":"TestLoadServer"}
{"Action":"pass","Package":"n","Test":"TestFast"}
{"Action":"pass","Package":"n","Elapsed":144.4}
{"Action":"pass","Package":"m/sub","Test":"TestSub"}
{"Action":"pass","Package":"m/sub","Elapsed":0.5}
{"ImportPath":"s","Action":"build-output","Output":"s/x.go:3:1: syntax error\n"}
{"ImportPath":"s","Action":"build-fail"}
{"Action":"output","Package":"s","Output":"FAIL\ts [build failed]\n"}
{"Action":"fail","Package":"s","Elapsed":0}
`

func TestSummary(t *testing.T) {
	const pg = "3 PostgreSQL tests skipped: PETSTORE_POSTGRES_URL is not set, so the PostgreSQL tests cannot run. " +
		"Start a server and set it, e.g. (n.TestPG1, n.TestPG2, n.TestPG3)\n" +
		"\tto include them: start PostgreSQL and run PETSTORE_POSTGRES_URL='postgres://postgres@127.0.0.1:5432/test?sslmode=disable' go run ./internal/cmd/testall\n"
	const short = "1 test skipped: skipping a test that runs the server in -short mode (n.TestSlow)\n" +
		"\tto include them: run without -short\n"
	const helpers = "2 helper tests, run by other tests in subprocesses, not counted (m.TestHarnessStore, n.TestLoadServer)\n"
	tests := []struct {
		name   string
		stream string
		ci     bool
		want   string
		status int
	}{
		{
			name:   "failures",
			stream: stream,
			want: "--- FAIL: TestBad (m)\n=== RUN   TestBad\n    m_test.go:9: got 1, want 2\n" +
				"s/x.go:3:1: syntax error\n--- FAIL: package s\nFAIL\ts [build failed]\n" +
				"\n" + pg + short + helpers +
				"1 package failed to build or to run (see above)\n" +
				"5 passed, 1 failed, 4 skipped\n",
			status: 1,
		},
		{
			name:   "skips only",
			stream: onlyPackages(stream, "n"),
			want: "\n" + pg + short +
				"1 helper test, run by other tests in subprocesses, not counted (n.TestLoadServer)\n" +
				"1 passed, 0 failed, 4 skipped\n",
			status: 0,
		},
		{
			name:   "skips only, CI",
			stream: onlyPackages(stream, "n"),
			ci:     true,
			want: "\n" + pg + short +
				"1 helper test, run by other tests in subprocesses, not counted (n.TestLoadServer)\n" +
				"CI=true: 3 PostgreSQL or browser tests were skipped, and CI must run them\n" +
				"1 passed, 0 failed, 4 skipped\n",
			status: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out strings.Builder
			s := newSummary(&out)
			if err := s.read(strings.NewReader(tt.stream)); err != nil {
				t.Fatal(err)
			}
			status := s.finish(false, tt.ci)
			if diff := cmp.Diff(tt.want, out.String()); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
			if status != tt.status {
				t.Errorf("exit status %d; want %d", status, tt.status)
			}
		})
	}
}

// onlyPackages returns the lines of stream about the packages named.
func onlyPackages(stream string, packages ...string) string {
	var b strings.Builder
	for line := range strings.Lines(stream) {
		for _, p := range packages {
			if strings.Contains(line, `"Package":"`+p+`"`) {
				b.WriteString(line)
			}
		}
	}
	return b.String()
}

func TestSkipOnlyShortUnderCI(t *testing.T) {
	var out strings.Builder
	s := newSummary(&out)
	s.handle(event{Action: "output", Package: "r", Test: "TestSlow", Output: "    slow_test.go:5: skipping in -short mode\n"})
	s.handle(event{Action: "skip", Package: "r", Test: "TestSlow"})
	if status := s.finish(false, true); status != 0 {
		t.Errorf("a test skipped in -short mode under CI=true: exit status %d, want 0:\n%s", status, out.String())
	}
}

// TestIsHelper holds the messages with which the repository's tests skip
// themselves: those of the helpers that other tests run in subprocesses,
// and those of real skips.
func TestIsHelper(t *testing.T) {
	tests := []struct {
		reason string
		want   bool
	}{
		{"helper run in a subprocess by TestStoreCatchesBrokenStores and TestStorePassesCorrectStores", true},
		{"helper run in a subprocess by TestDurabilityCatchesBrokenStores and TestDurabilityPassesLogStore", true},
		{"run by TestURL in a subprocess", true},
		{"the server process of TestLoadTwoProcesses, run by it", true},
		{"PETSTORE_POSTGRES_URL is not set, so the PostgreSQL tests cannot run. Start a server and set it, e.g.", false},
		{"skipping a test that builds and runs the server as a process in -short mode", false},
		{"the store with bug reuses-ids is caught only by the race detector; run go test -race", false},
		{"fills a store with 3 retentions of keys", false},
		{"no reason given", false},
	}
	for _, tt := range tests {
		if got := isHelper(tt.reason); got != tt.want {
			t.Errorf("isHelper(%q) = %v, want %v", tt.reason, got, tt.want)
		}
	}
}

// TestHungTestNamed runs a module whose test hangs past a short -timeout: the
// run fails, counts the hung test as failed and prints its name and the
// timeout's panic, which go test -json gives to the tests still running.
func TestHungTestNamed(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping a test that builds and runs go test in -short mode")
	}
	dir := t.TempDir()
	files := map[string]string{
		"go.mod": "module hang\n\ngo 1.26\n",
		"hang_test.go": `package hang

import (
	"testing"
	"time"
)

func TestQuick(t *testing.T) {}

func TestHangs(t *testing.T) {
	t.Log("waiting for ever")
	time.Sleep(time.Hour)
}
`,
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	t.Setenv("GOWORK", "off")
	var stdout, stderr strings.Builder
	status := run([]string{"-timeout=3s"}, &stdout, &stderr, func(string) string { return "" })
	out := stdout.String()
	if status != 1 {
		t.Errorf("exit status %d, want 1", status)
	}
	for _, want := range []string{
		"--- FAIL: TestHangs (hang) did not finish\n",
		"waiting for ever",
		"panic: test timed out after 3s",
		"1 passed, 1 failed, 0 skipped\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the output lacks %q:\n%s\nstderr:\n%s", want, out, stderr.String())
		}
	}
}
