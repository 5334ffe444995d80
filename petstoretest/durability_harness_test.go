package petstoretest_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/memstore"
	"github.com/petstore-go/petstore/petstoretest"
)

// harnessDurableEnv names the store that TestHarnessDurability runs
// TestDurability on: a bug of logStore, or memstore.
const harnessDurableEnv = "PETSTORETEST_HARNESS_DURABLE"

// TestHarnessDurability is not a test of its own:
// TestDurabilityCatchesBrokenStores and TestDurabilityPassesLogStore run it
// in a subprocess, as the tests of TestStore run TestHarnessStore.
func TestHarnessDurability(t *testing.T) {
	bug, ok := os.LookupEnv(harnessDurableEnv)
	if !ok {
		t.Skip("helper run in a subprocess by TestDurabilityCatchesBrokenStores and TestDurabilityPassesLogStore")
	}
	petstoretest.TestDurability(t, func(t *testing.T) petstoretest.OpenFunc {
		if bug == "memstore" { // not durable: each open starts empty
			return func(t *testing.T) (petstore.Store, func() error) {
				return memstore.New(), func() error { return nil }
			}
		}
		path := filepath.Join(t.TempDir(), "pets.log")
		return func(t *testing.T) (petstore.Store, func() error) {
			s, err := openLogStore(path, bug)
			if err != nil {
				t.Fatal(err)
			}
			return s, s.Close
		}
	})
}

// harnessBrokenDurableStores lists each store that does not keep what
// TestDurability checks, with the subtests that must catch it, each when
// run alone, the simplest first: when the whole of TestDurability runs, the
// first of them is the first subtest that fails.
var harnessBrokenDurableStores = []struct {
	bug     string
	catches []string
	// runs is how many runs must catch the store at least once; 0 means
	// 1. The bug key-after-pet shows only when a close or a cancel falls
	// between its two writes.
	runs int
}{
	{bug: "memstore", catches: []string{"pets-survive", "ids-never-reused", "keys-survive", "add-interrupted"}},
	{bug: "cache-only", catches: []string{"pets-survive", "ids-never-reused", "keys-survive", "add-interrupted"}},
	{bug: "ids-restart", catches: []string{"ids-never-reused", "keys-survive"}},
	{bug: "keys-lost", catches: []string{"keys-survive", "add-interrupted"}},
	{bug: "key-after-pet", catches: []string{"add-interrupted"}, runs: 3},
}

// harnessRunDurable runs TestDurability in a subprocess on the store bug,
// selecting the given subtests, until it fails or has run runs times.
func harnessRunDurable(t *testing.T, bug string, runs int, subtests []string, verbose bool) (string, bool) {
	t.Helper()
	var out string
	passed := true
	for range max(runs, 1) {
		if out, passed = harnessRunEnv(t, "TestHarnessDurability", []string{harnessDurableEnv + "=" + bug}, subtests, verbose); !passed {
			break
		}
	}
	return out, passed
}

// TestDurabilityCatchesBrokenStores runs each subtest that must catch a
// broken store alone, and checks that it fails with its clause; then it
// runs the whole of TestDurability, as go test without -v does, and checks
// that the first subtest that fails is the simplest one that catches the
// store, and that the later ones that fail only because it did say so in
// one line.
func TestDurabilityCatchesBrokenStores(t *testing.T) {
	_, clauses := petstoretest.DurabilityCases()
	failLine := regexp.MustCompile(`^\s*--- FAIL: TestHarnessDurability/(\S+) `)
	for _, tc := range harnessBrokenDurableStores {
		t.Run(tc.bug, func(t *testing.T) {
			t.Parallel()
			for _, name := range tc.catches {
				out, passed := harnessRunDurable(t, tc.bug, tc.runs, []string{name}, true)
				if passed {
					t.Errorf("TestDurability/%s passed the store %s in %d runs\n%s", name, tc.bug, max(tc.runs, 1), out)
					continue
				}
				harnessWantOutput(t, out, "--- FAIL: TestHarnessDurability/"+name+" ", "contract: "+clauses[name])
			}

			out, passed := harnessRunDurable(t, tc.bug, tc.runs, nil, false)
			if passed {
				t.Fatalf("TestDurability passed the store %s in %d runs\n%s", tc.bug, max(tc.runs, 1), out)
			}
			var failed []string
			blocks := map[string][]string{}
			for line := range strings.SplitSeq(out, "\n") {
				if m := failLine.FindStringSubmatch(line); m != nil {
					failed = append(failed, m[1])
				} else if len(failed) > 0 && strings.HasPrefix(line, "        ") {
					blocks[failed[len(failed)-1]] = append(blocks[failed[len(failed)-1]], line)
				}
			}
			if len(failed) == 0 || failed[0] != tc.catches[0] {
				t.Fatalf("the subtests that failed for the store %s are %v; want %s first\n%s", tc.bug, failed, tc.catches[0], out)
			}
			harnessWantOutput(t, strings.Join(blocks[failed[0]], "\n"), "contract: "+clauses[failed[0]])
			for _, name := range failed[1:] {
				if b := blocks[name]; len(b) != 1 || !strings.Contains(b[0], "likely because "+failed[0]+" failed") {
					t.Errorf("subtest %s failed with %d lines; want one that names %s, which failed first:\n%s", name, len(b), failed[0], strings.Join(b, "\n"))
				}
			}
		})
	}
}

// TestDurabilityPassesLogStore proves the harness: logStore, which keeps
// its pets and keys in a synced log, passes every subtest of
// TestDurability, run the same way.
func TestDurabilityPassesLogStore(t *testing.T) {
	names, _ := petstoretest.DurabilityCases()
	out, passed := harnessRun(t, "TestHarnessDurability", harnessDurableEnv, "none", nil)
	if !passed {
		t.Fatalf("TestDurability failed logStore, which keeps its pets and keys:\n%s", out)
	}
	harnessWantPasses(t, out, "TestHarnessDurability", names)
}

// TestLogStoreKeepsTheStoreContract checks that logStore, the durable store
// that the tests of TestDurability build on, keeps the whole Store
// contract, so that what its bugs break is only what they name.
func TestLogStoreKeepsTheStoreContract(t *testing.T) {
	petstoretest.TestStore(t, func(t *testing.T) petstore.Store {
		s, err := openLogStore(filepath.Join(t.TempDir(), "pets.log"), "none")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := s.Close(); err != nil {
				t.Error(err)
			}
		})
		return s
	})
}
