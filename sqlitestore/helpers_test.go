package sqlitestore_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/sqlitestore"
)

// newPath returns the path of a file, not yet created, in a new temporary
// directory.
func newPath(t testing.TB) string {
	t.Helper()
	return filepath.Join(t.TempDir(), "pets.db")
}

// open opens a Store on path and closes it when the test ends.
func open(t testing.TB, path string, opts ...sqlitestore.Option) *sqlitestore.Store {
	t.Helper()
	s, err := sqlitestore.Open(path, opts...)
	if err != nil {
		t.Fatalf("Open(%q): %v", path, err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// closeStore closes s, which open also closes when the test ends, and
// fails the test when Close fails.
func closeStore(t testing.TB, s *sqlitestore.Store) {
	t.Helper()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// rawDB opens a connection pool of its own on path, with the pragmas of a
// Store's readers but able to write, as another process would.
func rawDB(t testing.TB, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// holdWriteLock starts a BEGIN IMMEDIATE transaction on path from a
// connection of its own, and returns a function that rolls it back. While
// it is held, no Store can write the file.
func holdWriteLock(t *testing.T, path string, stmts ...string) (release func()) {
	t.Helper()
	ctx := context.Background()
	conn, err := rawDB(t, path).Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range append([]string{"BEGIN IMMEDIATE"}, stmts...) {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	var once sync.Once
	release = func() {
		once.Do(func() {
			if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
				t.Errorf("ROLLBACK: %v", err)
			}
			conn.Close()
		})
	}
	t.Cleanup(release)
	return release
}

// count returns the number of rows of table in the file at path.
func count(t *testing.T, path, table string) int64 {
	t.Helper()
	var n int64
	if err := rawDB(t, path).QueryRow("SELECT count(*) FROM " + table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// waitFor polls cond until it holds, and fails the test after a minute.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting until %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// all returns every pet in s.
func all(t *testing.T, s petstore.Store) []petstore.Pet {
	t.Helper()
	pets, err := s.List(context.Background(), petstore.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return pets
}

// add adds a pet named name, with key when it is not empty.
func add(t *testing.T, s petstore.Store, name, key string) petstore.Pet {
	t.Helper()
	p, _, err := s.Add(petstore.WithPrincipal(context.Background(), "alice"), petstore.NewPet{Name: name, CategoryID: 1, Status: petstore.StatusAvailable}, petstore.AddOptions{IdempotencyKey: key})
	if err != nil {
		t.Fatal(err)
	}
	return p
}
