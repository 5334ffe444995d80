package sqlitestore_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/sqlitestore"
)

// childEnv, when set in the environment of the test binary, makes it add
// pets to the file it names (see addFromChild) instead of running tests.
const childEnv = "SQLITESTORE_TEST_CHILD"

// journalEnv, when set, makes it change every pet of the file it names in
// a transaction that it never ends (see spillAndDie).
const journalEnv = "SQLITESTORE_TEST_JOURNAL"

func TestMain(m *testing.M) {
	if v := os.Getenv(childEnv); v != "" {
		if err := addFromChild(v); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if v := os.Getenv(journalEnv); v != "" {
		fmt.Fprintln(os.Stderr, spillAndDie(v))
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// spillAndDie renames every pet of the file at path in one transaction,
// in rollback-journal mode with a cache too small for the change, so that
// SQLite writes changed pages into the file before any commit, and then
// kills its process with SIGKILL, leaving a hot journal.
func spillAndDie(path string) error {
	db, err := sql.Open("sqlite", path+"?_pragma=journal_mode(DELETE)&_pragma=cache_size(10)")
	if err != nil {
		return err
	}
	if _, err := db.Exec("BEGIN; UPDATE pets SET name = name || ' renamed'"); err != nil {
		return err
	}
	return syscall.Kill(os.Getpid(), syscall.SIGKILL)
}

// writers and perWriter are how many goroutines add pets to the file in
// each writer of TestTwoProcesses, and how many pets each adds.
const (
	writers   = 4
	perWriter = 150
)

// addFromChild adds pets as a writer named by v, "path|tag", would.
func addFromChild(v string) error {
	path, tag, _ := strings.Cut(v, "|")
	s, err := sqlitestore.Open(path)
	if err != nil {
		return err
	}
	errs := addAll(s, tag)
	return errors.Join(append(errs, s.Close())...)
}

// addAll adds writers*perWriter pets to s from writers goroutines, every
// other one with a key that it then retries, and returns the errors, among
// them any ID that does not grow within a goroutine or a retry that did not
// replay.
func addAll(s *sqlitestore.Store, tag string) []error {
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
	)
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		errs = append(errs, err)
	}
	for w := range writers {
		wg.Go(func() {
			ctx := petstore.WithPrincipal(context.Background(), tag)
			var last int64
			for i := range perWriter {
				name := fmt.Sprintf("%s-%d-%d", tag, w, i)
				var opts petstore.AddOptions
				if i%2 == 0 {
					opts.IdempotencyKey = name
				}
				p := petstore.NewPet{Name: name, CategoryID: int64(w + 1)}
				got, _, err := s.Add(ctx, p, opts)
				if err != nil {
					fail(fmt.Errorf("add %s: %w", name, err))
					continue
				}
				if got.ID <= last {
					fail(fmt.Errorf("add %s: ID %d after %d", name, got.ID, last))
				}
				last = got.ID
				if opts.IdempotencyKey != "" {
					again, replayed, err := s.Add(ctx, p, opts)
					if err != nil || !replayed || again != got {
						fail(fmt.Errorf("retry %s: %+v, %v, %v; want %+v replayed", name, again, replayed, err, got))
					}
				}
			}
		})
	}
	wg.Wait()
	return errs
}

// TestTwoProcesses adds pets to one file from another process and from two
// Stores in this one, all at once, while a reader pages through the pets
// with a cursor. Every pet is stored exactly once, no call fails (waits for
// the other writers' locks end within the busy timeout), and the reader,
// which moves its cursor past every pet it sees, sees every pet: pets
// become visible in ID order.
func TestTwoProcesses(t *testing.T) {
	path := newPath(t)
	a := open(t, path)
	b := open(t, path)

	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), childEnv+"="+path+"|child")
	var out strings.Builder
	child.Stdout, child.Stderr = &out, &out
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}

	paging, stop := context.WithCancel(context.Background())
	seen := make(chan []petstore.Pet)
	go func() { seen <- page(t, a, paging) }()
	var wg sync.WaitGroup
	for tag, s := range map[string]*sqlitestore.Store{"a": a, "b": b} {
		wg.Go(func() {
			for _, err := range addAll(s, tag) {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if err := child.Wait(); err != nil {
		t.Errorf("the other process: %v\n%s", err, out.String())
	}
	stop()
	pages := <-seen

	pets := all(t, a)
	names := map[string]int{}
	for _, p := range pets {
		names[p.Name]++
	}
	for _, tag := range []string{"a", "b", "child"} {
		for w := range writers {
			for i := range perWriter {
				if name := fmt.Sprintf("%s-%d-%d", tag, w, i); names[name] != 1 {
					t.Errorf("pet %s stored %d times, want once", name, names[name])
				}
			}
		}
	}
	if want := 3 * writers * perWriter; len(pets) != want {
		t.Errorf("%d pets, want %d", len(pets), want)
	}
	if len(pages) != len(pets) {
		t.Errorf("the reader paging during the writes saw %d pets of %d: pets became visible out of ID order", len(pages), len(pets))
	}
}

// page lists s a page at a time, moving its cursor past every pet it sees,
// until stop is done and a last page comes back empty, and returns what it
// saw.
func page(t *testing.T, s *sqlitestore.Store, stop context.Context) []petstore.Pet {
	var seen []petstore.Pet
	var after int64
	for {
		stopped := stop.Err() != nil
		pets, err := s.List(context.Background(), petstore.ListOptions{After: after, Limit: 7})
		if err != nil {
			t.Error(err)
			return seen
		}
		seen = append(seen, pets...)
		if len(pets) > 0 {
			after = pets[len(pets)-1].ID
		} else if stopped {
			return seen
		}
	}
}
