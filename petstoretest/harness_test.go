package petstoretest_test

import (
	"cmp"
	"errors"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/memstore"
	"github.com/petstore-go/petstore/petstoretest"
)

// The suites take a *testing.T and fail it, so the tests below prove that
// they fail by running them in a subprocess of this test binary: the helper
// tests TestHarnessStore and TestHarnessServer run a suite against the
// broken store or handler that an environment variable names, and the
// parent asserts on the exit status and the output.
const (
	harnessStoreEnv  = "PETSTORETEST_HARNESS_STORE"
	harnessServerEnv = "PETSTORETEST_HARNESS_SERVER"
	harnessKeyEnv    = "PETSTORETEST_HARNESS_KEY" // the server's API key, when not brokenServerKey
)

// TestHarnessStore is not a test of its own: TestStoreCatchesBrokenStores
// and TestStorePassesCorrectStores run it in a subprocess.
func TestHarnessStore(t *testing.T) {
	bug, ok := os.LookupEnv(harnessStoreEnv)
	if !ok {
		t.Skip("helper run in a subprocess by TestStoreCatchesBrokenStores and TestStorePassesCorrectStores")
	}
	petstoretest.TestStore(t, func(t *testing.T) petstore.Store {
		if bug == "memstore" {
			return memstore.New()
		}
		s, err := newBrokenStore(bug)
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// TestHarnessServer is not a test of its own: TestServerCatchesBrokenHandlers
// and TestServerPassesCorrectHandler run it in a subprocess.
func TestHarnessServer(t *testing.T) {
	bug, ok := os.LookupEnv(harnessServerEnv)
	if !ok {
		t.Skip("helper run in a subprocess by TestServerCatchesBrokenHandlers and TestServerPassesCorrectHandler")
	}
	key := cmp.Or(os.Getenv(harnessKeyEnv), brokenServerKey)
	h, err := newBrokenHandler(bug, key)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	petstoretest.TestServer(t, petstoretest.Endpoint{BaseURL: srv.URL + "/v1", APIKey: key})
}

// harnessRun runs the helper test in a subprocess with -test.v and env set
// to bug, selecting the given subtests (all of them when there are none).
// It returns the output and whether the subprocess passed.
func harnessRun(t *testing.T, helper, env, bug string, subtests []string) (string, bool) {
	t.Helper()
	return harnessRunEnv(t, helper, []string{env + "=" + bug}, subtests, true)
}

// harnessRunEnv is harnessRun with the environment variables env, each
// "NAME=value", and with -test.v only when verbose is set.
func harnessRunEnv(t *testing.T, helper string, env, subtests []string, verbose bool) (string, bool) {
	t.Helper()
	run := "^" + helper + "$"
	if len(subtests) > 0 {
		quoted := make([]string, len(subtests))
		for i, s := range subtests {
			quoted[i] = regexp.QuoteMeta(s)
		}
		run += "/^(" + strings.Join(quoted, "|") + ")$"
	}
	args := []string{"-test.run=" + run, "-test.count=1", "-test.timeout=5m"}
	if verbose {
		args = append(args, "-test.v")
	}
	cmd := exec.CommandContext(t.Context(), os.Args[0], args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("running %s: %v\n%s", cmd, err, out)
	}
	return string(out), err == nil
}

// harnessBrokenStores lists each broken store with the subtests of
// TestStore that must catch it, each when run alone, the simplest first:
// when the whole of TestStore runs, the first of them is the first subtest
// that fails.
var harnessBrokenStores = []struct {
	bug      string
	catches  []string
	raceOnly bool // caught only by the race detector
	// runs is how many runs of TestStore must catch the store at least
	// once; 0 means 1. A race that the store leaves open is caught in most
	// runs, not in every one.
	runs int
}{
	{bug: "duplicate-ids", catches: []string{"ids-unique", "ids-unique-concurrent"}},
	{bug: "non-positive-ids", catches: []string{"ids-positive"}},
	{bug: "limit-ignored", catches: []string{"list-limit"}},
	{bug: "limit-off-by-one", catches: []string{"list-limit", "list-combined"}},
	{bug: "after-inclusive", catches: []string{"list-after", "paginate"}},
	{bug: "status-ignored", catches: []string{"list-status", "list-status-none"}},
	{bug: "no-status-under-filter", catches: []string{"list-status", "list-status-none"}},
	{bug: "wrong-order", catches: []string{"list-ascending"}},
	{bug: "missing-zero-value", catches: []string{"get-unknown"}},
	{bug: "not-found-unwrapped", catches: []string{"get-unknown"}},
	{bug: "status-dropped", catches: []string{"round-trip"}},
	{bug: "category-truncated", catches: []string{"round-trip"}},
	{bug: "context-ignored", catches: []string{"add-canceled", "get-canceled", "list-canceled", "deadline-exceeded"}},
	{bug: "aliasing", catches: []string{"no-alias"}},
	{bug: "no-locking", catches: []string{"ids-unique-concurrent", "concurrent-use"}, raceOnly: true},
	{bug: "no-validation", catches: []string{"add-invalid"}},
	{bug: "key-ignored", catches: []string{"idempotent-replay"}},
	{bug: "key-unscoped", catches: []string{"idempotent-scope"}},
	{bug: "key-body-unchecked", catches: []string{"idempotent-reuse"}},
	{bug: "id-before-lock", catches: []string{"paginate-concurrent-adds"}, runs: 3},
}

// harnessRunStore runs TestStore in a subprocess on the store with bug,
// selecting the given subtests, until it fails or has run runs times.
func harnessRunStore(t *testing.T, bug string, runs int, subtests []string, verbose bool) (string, bool) {
	t.Helper()
	var out string
	passed := true
	for range max(runs, 1) {
		if out, passed = harnessRunEnv(t, "TestHarnessStore", []string{harnessStoreEnv + "=" + bug}, subtests, verbose); !passed {
			break
		}
	}
	return out, passed
}

func TestStoreCatchesBrokenStores(t *testing.T) {
	_, clauses := petstoretest.StoreCases()
	for _, tc := range harnessBrokenStores {
		t.Run(tc.bug, func(t *testing.T) {
			t.Parallel()
			if tc.raceOnly && !raceEnabled {
				t.Skipf("the store with bug %s is caught only by the race detector; run go test -race", tc.bug)
			}
			for _, name := range tc.catches {
				out, passed := harnessRunStore(t, tc.bug, tc.runs, []string{name}, true)
				if passed {
					t.Errorf("TestStore/%s passed the store with bug %s in %d runs\n%s", name, tc.bug, max(tc.runs, 1), out)
					continue
				}
				want := []string{"--- FAIL: TestHarnessStore/" + name + " "}
				if tc.raceOnly {
					want = append(want, "WARNING: DATA RACE")
				} else {
					want = append(want, "contract: "+clauses[name])
				}
				harnessWantOutput(t, out, want...)
			}
		})
	}
}

// harnessMaxLines is the most lines that TestStore may print, under go test
// without -v, for a store with one bug, not counting the reports of the
// race detector.
const harnessMaxLines = 150

// TestStoreReportsOneBugBriefly runs the whole of TestStore on each broken
// store, as go test without -v does, and checks that the first subtest that
// fails is the simplest clause that the bug breaks, that the other subtests
// that fail for the same bug say so in one line, and that the output is
// short.
func TestStoreReportsOneBugBriefly(t *testing.T) {
	_, clauses := petstoretest.StoreCases()
	failLine := regexp.MustCompile(`^\s*--- FAIL: TestHarnessStore/(\S+) `)
	for _, tc := range harnessBrokenStores {
		t.Run(tc.bug, func(t *testing.T) {
			t.Parallel()
			if tc.raceOnly && !raceEnabled {
				t.Skipf("the store with bug %s is caught only by the race detector; run go test -race", tc.bug)
			}
			out, passed := harnessRunStore(t, tc.bug, tc.runs, nil, false)
			if passed {
				t.Fatalf("TestStore passed the store with bug %s in %d runs\n%s", tc.bug, max(tc.runs, 1), out)
			}
			lines := withoutRaceReports(strings.Split(strings.TrimSuffix(out, "\n"), "\n"))
			if len(lines) > harnessMaxLines {
				t.Errorf("TestStore printed %d lines (race reports aside) for the store with bug %s, want at most %d:\n%s", len(lines), tc.bug, harnessMaxLines, out)
			}

			// The lines of each failed subtest, in the order shown.
			var failed []string
			blocks := map[string][]string{}
			for _, line := range lines {
				if m := failLine.FindStringSubmatch(line); m != nil {
					failed = append(failed, m[1])
					continue
				}
				if len(failed) > 0 && strings.HasPrefix(line, "        ") {
					name := failed[len(failed)-1]
					blocks[name] = append(blocks[name], line)
				}
			}
			if len(failed) == 0 || failed[0] != tc.catches[0] {
				t.Fatalf("the subtests that failed for the store with bug %s are %v; want %s first\n%s", tc.bug, failed, tc.catches[0], out)
			}
			if !tc.raceOnly {
				harnessWantOutput(t, strings.Join(blocks[failed[0]], "\n"), "contract: "+clauses[failed[0]])
			}
			for _, name := range failed[1:] {
				b := blocks[name]
				if tc.raceOnly || slices.Contains(tc.catches, name) {
					continue
				}
				if len(b) != 1 || !strings.Contains(b[0], "fails too (") || !strings.Contains(b[0], "likely because "+failed[0]+" failed") {
					t.Errorf("subtest %s failed with %d lines; want one that names %s, which failed first:\n%s", name, len(b), failed[0], strings.Join(b, "\n"))
				}
				if alone := "run it alone: go test -run '^TestHarnessStore$/^" + regexp.QuoteMeta(name) + "$'"; len(b) == 1 && !strings.HasSuffix(b[0], alone) {
					t.Errorf("subtest %s failed with %q; want it to end with how to run it alone: %s", name, b[0], alone)
				}
			}
		})
	}
}

// withoutRaceReports returns lines without the reports of the race
// detector, which start with WARNING: DATA RACE and end with a line of =.
func withoutRaceReports(lines []string) []string {
	var out []string
	in := false
	for _, line := range lines {
		switch {
		case strings.Contains(line, "WARNING: DATA RACE"):
			in = true
		case in && strings.HasPrefix(line, "=================="):
			in = false
		case !in:
			out = append(out, line)
		}
	}
	return out
}

// harnessBrokenHandlers lists each broken handler with the subtests of
// TestServer that must catch it and, when it is not theirs, the rule that
// they must name.
var harnessBrokenHandlers = []struct {
	bug     string
	key     string // the server's API key; "" means brokenServerKey
	catches []string
	rule    string
}{
	{bug: "wrong-status", catches: []string{"create"}},
	{bug: "no-www-authenticate", catches: []string{"auth-missing", "auth-bad-token"}},
	{bug: "error-without-status", catches: []string{"get-unknown", "unknown-path"}},
	{bug: "echoes-credential", catches: []string{"auth-wrong-scheme", "auth-bad-token", "get-unknown"}},
	// A key that is also a word of the server's own messages is still
	// caught when it is echoed.
	{bug: "echoes-credential", key: "key", catches: []string{"auth-wrong-scheme", "auth-bad-token", "get-unknown"}},
	{bug: "link-skips-pets", catches: []string{"list-pagination-while-adding"}},
	{bug: "link-drops-status", catches: []string{"list-status"}},
	{bug: "no-accept-post", catches: []string{"create-unsupported-media-type"}},
	{bug: "no-sunset", catches: []string{"get-deprecation"}},
	{bug: "no-nosniff", catches: []string{"get"}, rule: petstoretest.HeadersClause},
	{bug: "trailing-slash-redirect", catches: []string{"unknown-path"}},
}

func TestServerCatchesBrokenHandlers(t *testing.T) {
	_, rules := petstoretest.ServerCases()
	for _, tc := range harnessBrokenHandlers {
		name := tc.bug
		if tc.key != "" {
			name += "/key=" + tc.key
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			env := []string{harnessServerEnv + "=" + tc.bug, harnessKeyEnv + "=" + tc.key}
			out, passed := harnessRunEnv(t, "TestHarnessServer", env, tc.catches, true)
			if passed {
				t.Fatalf("TestServer passed the handler with bug %s; want failures in %v\n%s", tc.bug, tc.catches, out)
			}
			for _, name := range tc.catches {
				rule := tc.rule
				if rule == "" {
					rule = rules[name]
				}
				harnessWantOutput(t, out, "--- FAIL: TestHarnessServer/"+name+" ", "rule: "+rule, "(-want +got)")
			}
		})
	}
}

// TestStorePassesCorrectStores proves the harness: the stores that keep the
// contract pass every subtest of TestStore, run the same way.
func TestStorePassesCorrectStores(t *testing.T) {
	names, _ := petstoretest.StoreCases()
	for _, store := range []string{"memstore", "none"} {
		t.Run(store, func(t *testing.T) {
			t.Parallel()
			out, passed := harnessRun(t, "TestHarnessStore", harnessStoreEnv, store, nil)
			if !passed {
				t.Fatalf("TestStore failed the store %s, which keeps the contract:\n%s", store, out)
			}
			harnessWantPasses(t, out, "TestHarnessStore", names)
		})
	}
}

// TestServerPassesCorrectHandler proves the harness: the real handler,
// passed through the same recorder as the broken ones, passes every subtest
// of TestServer.
func TestServerPassesCorrectHandler(t *testing.T) {
	names, _ := petstoretest.ServerCases()
	out, passed := harnessRun(t, "TestHarnessServer", harnessServerEnv, "none", nil)
	if !passed {
		t.Fatalf("TestServer failed the handler of petstore.New:\n%s", out)
	}
	harnessWantPasses(t, out, "TestHarnessServer", names)
}

// harnessWantOutput reports each of want that out does not contain.
func harnessWantOutput(t *testing.T, out string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("the output does not contain %q:\n%s", w, out)
		}
	}
}

// harnessWantPasses reports each subtest of helper in names that out does
// not show as passed, and any skipped test.
func harnessWantPasses(t *testing.T, out, helper string, names []string) {
	t.Helper()
	for _, name := range names {
		if !strings.Contains(out, "--- PASS: "+helper+"/"+name+" ") {
			t.Errorf("subtest %s did not pass:\n%s", name, out)
		}
	}
	if strings.Contains(out, "--- SKIP") {
		t.Errorf("a subtest was skipped:\n%s", out)
	}
}
