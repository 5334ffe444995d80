package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// stream is what go test -json prints for a package with a passing test, a
// failing one, three skipped for want of PostgreSQL, one skipped in -short
// mode, a subtest, and a package that does not build.
const stream = `{"Action":"run","Package":"p","Test":"TestOK"}
{"Action":"output","Package":"p","Test":"TestOK","Output":"=== RUN   TestOK\n"}
{"Action":"pass","Package":"p","Test":"TestOK"}
{"Action":"run","Package":"p","Test":"TestBad"}
{"Action":"output","Package":"p","Test":"TestBad","Output":"=== RUN   TestBad\n"}
{"Action":"output","Package":"p","Test":"TestBad","Output":"    p_test.go:9: got 1, want 2\n"}
{"Action":"fail","Package":"p","Test":"TestBad"}
{"Action":"run","Package":"p","Test":"TestParent/sub"}
{"Action":"pass","Package":"p","Test":"TestParent/sub"}
{"Action":"pass","Package":"p","Test":"TestParent"}
{"Action":"fail","Package":"p"}
{"Action":"output","Package":"q","Test":"TestPG1","Output":"    pgtest.go:24: PETSTORE_POSTGRES_URL is not set, so the PostgreSQL tests cannot run. Start a server and set it, e.g.\n"}
{"Action":"output","Package":"q","Test":"TestPG1","Output":"        \tPETSTORE_POSTGRES_URL=... go test ./...\n"}
{"Action":"skip","Package":"q","Test":"TestPG1"}
{"Action":"output","Package":"q","Test":"TestPG2","Output":"    pgtest.go:24: PETSTORE_POSTGRES_URL is not set, so the PostgreSQL tests cannot run. Start a server and set it, e.g.\n"}
{"Action":"skip","Package":"q","Test":"TestPG2"}
{"Action":"output","Package":"r","Test":"TestPG3","Output":"    pgtest.go:24: PETSTORE_POSTGRES_URL is not set, so the PostgreSQL tests cannot run. Start a server and set it, e.g.\n"}
{"Action":"skip","Package":"r","Test":"TestPG3"}
{"Action":"output","Package":"r","Test":"TestSlow","Output":"    slow_test.go:5: skipping a test that runs the server in -short mode\n"}
{"Action":"skip","Package":"r","Test":"TestSlow"}
{"Action":"pass","Package":"q"}
{"Action":"pass","Package":"r"}
{"ImportPath":"s","Action":"build-output","Output":"s/x.go:3:1: syntax error\n"}
{"ImportPath":"s","Action":"build-fail"}
{"Action":"output","Package":"s","Output":"FAIL\ts [build failed]\n"}
{"Action":"fail","Package":"s"}
`

func TestSummary(t *testing.T) {
	const pg = "3 PostgreSQL tests skipped: PETSTORE_POSTGRES_URL is not set, so the PostgreSQL tests cannot run. " +
		"Start a server and set it, e.g. (q.TestPG1, q.TestPG2, r.TestPG3)\n" +
		"\tto include them: start PostgreSQL and run PETSTORE_POSTGRES_URL='postgres://postgres@127.0.0.1:5432/test?sslmode=disable' go run ./internal/cmd/testall\n"
	const short = "1 test skipped: skipping a test that runs the server in -short mode (r.TestSlow)\n" +
		"\tto include them: run without -short\n"
	const failures = "--- FAIL: TestBad (p)\n=== RUN   TestBad\n    p_test.go:9: got 1, want 2\n" +
		"s/x.go:3:1: syntax error\n--- FAIL: package s\nFAIL\ts [build failed]\n"
	tests := []struct {
		name   string
		stream string
		ci     bool
		want   string
		status int
	}{
		{"failures", stream, false, failures + "\n3 passed, 1 failed, 4 skipped\n1 packages failed to build or to run (see above)\n" + pg + short, 1},
		{"skips only", onlyPackages(stream, "q", "r"), false, "\n0 passed, 0 failed, 4 skipped\n" + pg + short, 0},
		{"skips only, CI", onlyPackages(stream, "q", "r"), true,
			"\n0 passed, 0 failed, 4 skipped\n" + pg + short + "CI=true: 3 PostgreSQL or browser tests were skipped, and CI must run them\n", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out strings.Builder
			s := newSummary(&out)
			if err := s.read(strings.NewReader(tt.stream)); err != nil {
				t.Fatal(err)
			}
			status := s.finish(false, tt.ci)
			if tt.want != "" {
				if diff := cmp.Diff(tt.want, out.String()); diff != "" {
					t.Errorf("output (-want +got):\n%s", diff)
				}
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
