package petstoretest_test

import (
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/memstore"
	"github.com/petstore-go/petstore/petstoretest"
)

// clauseLine matches the first line of the report of a failed clause.
var clauseLine = regexp.MustCompile(`(?m)^petstoretest: clause "([^"]+)" failed`)

// failedClauses returns the clauses that err reports, in order.
func failedClauses(err error) []string {
	if err == nil {
		return nil
	}
	var failed []string
	for _, m := range clauseLine.FindAllStringSubmatch(err.Error(), -1) {
		failed = append(failed, m[1])
	}
	return failed
}

// retry calls check until it returns an error or has run runs times (at
// least once), and returns the last error. A race that a broken store
// leaves open is caught in most runs, not in every one.
func retry(runs int, check func() error) error {
	var err error
	for range max(runs, 1) {
		if err = check(); err != nil {
			break
		}
	}
	return err
}

// TestCheckStoreCatchesBrokenStores checks that each clause that must catch
// a broken store does so when it runs alone, and that CheckStore reports
// each of them.
func TestCheckStoreCatchesBrokenStores(t *testing.T) {
	for _, tc := range []struct {
		bug     string
		catches []string // the simplest first
		runs    int      // how many runs must catch the store at least once; 0 means 1
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
		{bug: "id-unguarded", catches: []string{"ids-unique-concurrent"}, runs: 3},
		{bug: "no-validation", catches: []string{"add-invalid"}},
		{bug: "key-ignored", catches: []string{"idempotent-replay"}},
		{bug: "key-unscoped", catches: []string{"idempotent-scope"}},
		{bug: "key-body-unchecked", catches: []string{"idempotent-reuse"}},
		{bug: "id-before-lock", catches: []string{"paginate-concurrent-adds"}, runs: 3},
		{bug: "wake-late", catches: []string{"notify-adds"}},
	} {
		t.Run(tc.bug, func(t *testing.T) {
			t.Parallel()
			newStore := func() (petstore.Store, error) { return newBrokenStore(tc.bug) }
			for _, name := range tc.catches {
				err := retry(tc.runs, func() error { return petstoretest.CheckStoreClause(newStore, name) })
				if failed := failedClauses(err); !slices.Equal(failed, []string{name}) {
					t.Errorf("clause %s alone on the store with bug %s: %v", name, tc.bug, err)
				}
			}
			err := retry(tc.runs, func() error { return petstoretest.CheckStore(newStore) })
			if failed := failedClauses(err); !slices.Contains(failed, tc.catches[0]) {
				t.Errorf("CheckStore on the store with bug %s failed the clauses %v; want %s among them:\n%v", tc.bug, failed, tc.catches[0], err)
			}
		})
	}
}

// TestCheckStorePassesCorrectStores checks that the stores that keep the
// contract pass every clause.
func TestCheckStorePassesCorrectStores(t *testing.T) {
	for name, newStore := range map[string]func() (petstore.Store, error){
		"memstore": func() (petstore.Store, error) { return memstore.New(), nil },
		"none":     func() (petstore.Store, error) { return newBrokenStore("none") },
	} {
		if err := petstoretest.CheckStore(newStore); err != nil {
			t.Errorf("CheckStore on %s, which keeps the contract: %v", name, err)
		}
	}
}

// newLogData returns a function that makes a new log of logStore with bug,
// or, for the bug "memstore", that opens a new memstore each time: nothing
// survives its close.
func newLogData(t *testing.T, bug string) func() func() (petstore.Store, func() error) {
	return func() func() (petstore.Store, func() error) {
		if bug == "memstore" {
			return func() (petstore.Store, func() error) { return memstore.New(), func() error { return nil } }
		}
		path := filepath.Join(t.TempDir(), "pets.log")
		return func() (petstore.Store, func() error) {
			s, err := openLogStore(path, bug)
			if err != nil {
				t.Fatal(err)
			}
			return s, s.Close
		}
	}
}

// TestCheckDurabilityCatchesBrokenStores checks TestDurability's core on
// stores that do not keep what it checks, as
// TestCheckStoreCatchesBrokenStores checks TestStore's.
func TestCheckDurabilityCatchesBrokenStores(t *testing.T) {
	for _, tc := range []struct {
		bug     string
		catches []string
		// runs is how many runs must catch the store at least once; the
		// bug key-after-pet shows only when a close or a cancel falls
		// between its two writes.
		runs int
	}{
		{bug: "memstore", catches: []string{"pets-survive", "ids-never-reused", "keys-survive", "add-interrupted"}},
		{bug: "cache-only", catches: []string{"pets-survive", "ids-never-reused", "keys-survive", "add-interrupted"}},
		{bug: "ids-restart", catches: []string{"ids-never-reused", "keys-survive"}},
		{bug: "keys-lost", catches: []string{"keys-survive", "add-interrupted"}},
		{bug: "key-after-pet", catches: []string{"add-interrupted"}, runs: 3},
	} {
		t.Run(tc.bug, func(t *testing.T) {
			t.Parallel()
			newData := newLogData(t, tc.bug)
			for _, name := range tc.catches {
				err := retry(tc.runs, func() error { return petstoretest.CheckDurability(newData, name) })
				if failed := failedClauses(err); !slices.Equal(failed, []string{name}) {
					t.Errorf("clause %s alone on the store %s: %v", name, tc.bug, err)
				}
			}
			err := retry(tc.runs, func() error { return petstoretest.CheckDurability(newData, "") })
			if failed := failedClauses(err); len(slices.DeleteFunc(slices.Clone(tc.catches), func(n string) bool { return slices.Contains(failed, n) })) > 0 {
				t.Errorf("CheckDurability on the store %s failed the clauses %v, want %v among them:\n%v", tc.bug, failed, tc.catches, err)
			}
		})
	}
}

// TestDurabilityPassesLogStore checks that logStore, which keeps its pets
// and keys in a synced log, passes TestDurability and TestStore, so that
// what its bugs break is only what they name.
func TestDurabilityPassesLogStore(t *testing.T) {
	newData := newLogData(t, "none")
	petstoretest.TestDurability(t, func(t *testing.T) petstoretest.OpenFunc {
		open := newData()
		return func(*testing.T) (petstore.Store, func() error) { return open() }
	})
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

// TestCheckServerCatchesBrokenHandlers checks that CheckServer reports
// each broken handler under the rules that must catch it, and passes the
// handler of petstore.New.
func TestCheckServerCatchesBrokenHandlers(t *testing.T) {
	for _, tc := range []struct {
		bug     string
		key     string // the server's API key; "" means brokenServerKey
		catches []string
		rule    string // a rule that the report must name, when it is not the clause's own
	}{
		{bug: "none"},
		{bug: "wrong-status", catches: []string{"create"}},
		{bug: "no-www-authenticate", catches: []string{"auth-missing", "auth-bad-token"}},
		{bug: "error-without-status", catches: []string{"get-unknown", "unknown-path"}},
		{bug: "echoes-credential", catches: []string{"auth-wrong-scheme", "auth-bad-token", "get-unknown"}},
		// A key that is also a word of the server's own messages is still
		// caught when it is echoed.
		{bug: "echoes-credential", key: "key", catches: []string{"auth-wrong-scheme", "auth-bad-token", "get-unknown"}},
		{bug: "echoes-credential-in-header", key: "key", catches: []string{"auth-wrong-scheme", "auth-bad-token", "get-unknown"}},
		{bug: "link-skips-pets", catches: []string{"list-pagination-while-adding"}},
		{bug: "link-drops-status", catches: []string{"list-status"}},
		{bug: "no-accept-post", catches: []string{"create-unsupported-media-type"}},
		{bug: "no-sunset", catches: []string{"get-deprecation"}},
		{bug: "no-nosniff", catches: []string{"get"}, rule: petstoretest.HeadersRule},
		{bug: "trailing-slash-redirect", catches: []string{"unknown-path"}},
		{bug: "name-twice", catches: []string{"create", "get", "list-default-limit"}},
		{bug: "code-twice", catches: []string{"get-unknown", "unknown-path"}},
		{bug: "router-405", catches: []string{"method-not-allowed"},
			rule: `the method "get" was answered 405 without the handler's JSON error body (""), so a router in front of the handler answered, not the handler; want 405 method_not_allowed`},
	} {
		t.Run(tc.bug+"/key="+tc.key, func(t *testing.T) {
			t.Parallel()
			key := tc.key
			if key == "" {
				key = brokenServerKey
			}
			h, err := newBrokenHandler(tc.bug, key)
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(h)
			defer srv.Close()
			err = petstoretest.CheckServer(petstoretest.Endpoint{BaseURL: srv.URL + "/v1", APIKey: key})
			failed := failedClauses(err)
			for _, name := range tc.catches {
				if !slices.Contains(failed, name) {
					t.Errorf("CheckServer did not fail the rule %s for the handler with bug %s; it failed %v", name, tc.bug, failed)
				}
			}
			if tc.catches == nil && err != nil {
				t.Errorf("CheckServer on the handler of petstore.New: %v", err)
			}
			if err != nil && !strings.Contains(err.Error(), tc.rule) {
				t.Errorf("the report does not name the rule %q:\n%v", tc.rule, err)
			}
		})
	}
}
