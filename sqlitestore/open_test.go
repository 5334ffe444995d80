package sqlitestore_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/sqlitestore"
)

// TestOpenRefuses checks that Open refuses what cannot hold a store, with an
// error that names the path and says why, and leaves an existing file as it
// was.
func TestOpenRefuses(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T) string // returns the path to open
		want  []string                  // in the error's text, besides the path
	}{
		{"directory missing", func(t *testing.T) string {
			return filepath.Join(t.TempDir(), "missing", "pets.db")
		}, []string{"does not exist"}},
		{"path is a directory", func(t *testing.T) string {
			return t.TempDir()
		}, []string{"is a directory"}},
		{"not a database", func(t *testing.T) string {
			path := newPath(t)
			write(t, path, bytes.Repeat([]byte("this is not a database\n"), 300), 0o644)
			return path
		}, []string{"not a SQLite database"}},
		{"read-only file", func(t *testing.T) string {
			path := newPath(t)
			closeStore(t, open(t, path))
			if err := os.Chmod(path, 0o444); err != nil {
				t.Fatal(err)
			}
			return path
		}, []string{"read-only"}},
		{"another application's database", func(t *testing.T) string {
			path := newPath(t)
			execSQL(t, path, "CREATE TABLE t (x)", "PRAGMA application_id = 42")
			return path
		}, []string{"another application", "0x2a"}},
		{"newer schema", func(t *testing.T) string {
			path := newPath(t)
			closeStore(t, open(t, path))
			execSQL(t, path, fmt.Sprintf("PRAGMA user_version = %d", sqlitestore.SchemaVersion+1), "PRAGMA journal_mode = DELETE")
			return path
		}, []string{fmt.Sprintf("schema version %d", sqlitestore.SchemaVersion+1), fmt.Sprintf("versions up to %d", sqlitestore.SchemaVersion), "newer version"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := tt.setup(t)
			before, _ := os.ReadFile(path) // nil for a directory or a missing file
			entries := dirEntries(t, path) // the -wal and -shm files too
			s, err := sqlitestore.Open(path)
			if err == nil {
				s.Close()
				t.Fatalf("Open(%q) succeeded; want an error", path)
			}
			abs, _ := filepath.Abs(path)
			for _, want := range append(tt.want, abs) {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("Open(%q) = %v; want an error that says %q", path, err, want)
				}
			}
			after, _ := os.ReadFile(path)
			if !bytes.Equal(before, after) {
				t.Errorf("Open changed %s", path)
			}
			if diff := cmp.Diff(entries, dirEntries(t, path)); diff != "" {
				t.Errorf("files beside %s (-before +after):\n%s", path, diff)
			}
		})
	}
}

// dirEntries returns the names of the files in the directory of path, or
// nil when it does not exist.
func dirEntries(t *testing.T, path string) []string {
	t.Helper()
	es, _ := os.ReadDir(filepath.Dir(path))
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func write(t *testing.T, path string, b []byte, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, b, mode); err != nil {
		t.Fatal(err)
	}
}

// execSQL runs statements on the file at path through a connection of its own.
func execSQL(t *testing.T, path string, stmts ...string) {
	t.Helper()
	db := rawDB(t, path)
	for _, q := range stmts {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()
}

// TestOpenOptions checks that Open reports every invalid option with its
// fix, and creates nothing then, and that Path is absolute.
func TestOpenOptions(t *testing.T) {
	path := newPath(t)
	_, err := sqlitestore.Open(path, sqlitestore.WithClock(nil), sqlitestore.WithKeyRetention(time.Hour))
	if err == nil {
		t.Fatal("Open with invalid options succeeded")
	}
	for _, want := range []string{"WithClock: the clock is nil", "WithKeyRetention: 1h0m0s is shorter"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Open with invalid options created %s (stat: %v)", path, err)
	}
	t.Chdir(filepath.Dir(path))
	s := open(t, filepath.Base(path), sqlitestore.WithKeyRetention(petstore.MinKeyRetention))
	if s.Path() != path {
		t.Errorf("Path() = %q, want %q, absolute", s.Path(), path)
	}
}

// TestSchema checks the file that Open creates: its version, the pragmas,
// and the tables and indexes the package doc describes.
func TestSchema(t *testing.T) {
	path := newPath(t)
	open(t, path)
	db := rawDB(t, path)
	var version, appID int64
	var mode string
	if err := db.QueryRow("SELECT * FROM pragma_user_version, pragma_application_id, pragma_journal_mode").Scan(&version, &appID, &mode); err != nil {
		t.Fatal(err)
	}
	if version != sqlitestore.SchemaVersion || appID != 0x70657431 || mode != "wal" {
		t.Errorf("user_version %d, application_id %#x, journal_mode %s; want %d, 0x70657431, wal", version, appID, mode, sqlitestore.SchemaVersion)
	}
	rows, err := db.Query("SELECT type, name FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%' ORDER BY name")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var typ, name string
		if err := rows.Scan(&typ, &name); err != nil {
			t.Fatal(err)
		}
		got = append(got, typ+" "+name)
	}
	want := []string{"table pet_keys", "index pet_keys_created_at", "table pets", "index pets_status_id"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("schema (-want +got):\n%s", diff)
	}
}

// TestReopenKeepsEverything checks that a Store opened again on a file
// finds its pets and keys, and never reuses an ID, even when the pet with
// the largest one is gone.
func TestReopenKeepsEverything(t *testing.T) {
	path := newPath(t)
	s := open(t, path)
	first, last := add(t, s, "Rex", "k"), add(t, s, "Rex", "")
	closeStore(t, s)
	execSQL(t, path, fmt.Sprintf("DELETE FROM pets WHERE id = %d", last.ID))

	s = open(t, path)
	if got := add(t, s, "Rex", "k"); got != first {
		t.Errorf("keyed retry after reopen: %+v; want %+v replayed", got, first)
	}
	if next := add(t, s, "Rex", ""); next.ID <= last.ID {
		t.Errorf("after reopen the next ID is %d; want more than %d, the largest ever used", next.ID, last.ID)
	}
}

// TestClose checks that Close waits for an Add in flight, and that every
// call after it fails with ErrClosed and ErrUnavailable.
func TestClose(t *testing.T) {
	s := open(t, newPath(t))
	release := holdWriteLock(t, s.Path())
	done := make(chan result, 1)
	go func() {
		p, r, err := s.Add(context.Background(), petstore.NewPet{Name: "in flight", CategoryID: 1}, petstore.AddOptions{})
		done <- result{p, r, err}
	}()
	waitFor(t, "the Add is in flight", func() bool { return sqlitestore.Busy(s) })
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	time.Sleep(20 * time.Millisecond) // give Close the chance to run ahead
	select {
	case err := <-closed:
		t.Fatalf("Close returned (%v) while an Add was in flight", err)
	default:
	}
	release()
	if r := <-done; r.err != nil {
		t.Errorf("the Add in flight during Close: %v", r.err)
	}
	if err := <-closed; err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	ctx := context.Background()
	_, _, addErr := s.Add(ctx, petstore.NewPet{Name: "late", CategoryID: 1}, petstore.AddOptions{})
	_, getErr := s.Get(ctx, 1)
	_, listErr := s.List(ctx, petstore.ListOptions{})
	for name, err := range map[string]error{"Add": addErr, "Get": getErr, "List": listErr} {
		if !errors.Is(err, sqlitestore.ErrClosed) || !errors.Is(err, petstore.ErrUnavailable) {
			t.Errorf("%s after Close: %v; want an error wrapping ErrClosed and ErrUnavailable", name, err)
		}
	}
	if n := count(t, s.Path(), "pets"); n != 1 {
		t.Errorf("%d pets in the file, want 1", n)
	}
}

// TestReadsDoNotWaitForWrites holds a write transaction open, with a pet
// written but not committed, from another connection, while the Store's own
// writer waits for it with an Add: Get and List answer at once from the
// last commit.
func TestReadsDoNotWaitForWrites(t *testing.T) {
	s := open(t, newPath(t))
	p, _, err := s.Add(context.Background(), petstore.NewPet{Name: "Rex", CategoryID: 1}, petstore.AddOptions{})
	if err != nil {
		t.Fatal(err)
	}
	release := holdWriteLock(t, s.Path(), "INSERT INTO pets (name, category_id) VALUES ('uncommitted', 1)")
	added := make(chan error, 1)
	go func() {
		_, _, err := s.Add(context.Background(), petstore.NewPet{Name: "waiting", CategoryID: 1}, petstore.AddOptions{})
		added <- err
	}()
	waitFor(t, "the Add is in flight", func() bool { return sqlitestore.Busy(s) })
	defer func() {
		release()
		if err := <-added; err != nil {
			t.Errorf("the Add that waited for the lock: %v", err)
		}
	}()
	// Far shorter than the busy timeout, for which the Add may wait.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	got, err := s.Get(ctx, p.ID)
	if err != nil || got != p {
		t.Errorf("Get during a write: %+v, %v; want %+v", got, err, p)
	}
	if _, err := s.Get(ctx, p.ID+1); !errors.Is(err, petstore.ErrNotFound) {
		t.Errorf("Get of the uncommitted pet: %v, want ErrNotFound", err)
	}
	pets, err := s.List(ctx, petstore.ListOptions{})
	if diff := cmp.Diff([]petstore.Pet{p}, pets); err != nil || diff != "" {
		t.Errorf("List during a write: %v (-want +got):\n%s", err, diff)
	}
}

// TestFullDisk fills the file (max_page_count stands in for the disk) and
// checks that Add then fails with ErrUnavailable naming the path, that
// nothing stored before is lost, and that Add works once there is room.
func TestFullDisk(t *testing.T) {
	s := open(t, newPath(t))
	ctx := context.Background()
	for i := range 20 {
		add(t, s, fmt.Sprint("pet ", i), "")
	}
	before := all(t, s)
	if err := sqlitestore.SetMaxPageCount(s, 0); err != nil {
		t.Fatal(err)
	}
	big := petstore.NewPet{Name: strings.Repeat("\u4e16", petstore.MaxNameLength), CategoryID: 1}
	var err error
	for i := 0; err == nil && i < 100; i++ {
		_, _, err = s.Add(ctx, big, petstore.AddOptions{})
	}
	if !errors.Is(err, petstore.ErrUnavailable) || !strings.Contains(err.Error(), s.Path()) {
		t.Fatalf("Add to a full file: %v; want an error wrapping ErrUnavailable that names %s", err, s.Path())
	}
	after := all(t, s)
	if diff := cmp.Diff(before, after[:min(len(before), len(after))]); diff != "" {
		t.Errorf("pets stored before the disk filled (-before +after):\n%s", diff)
	}
	var check string
	if err := rawDB(t, s.Path()).QueryRow("PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
		t.Errorf("integrity_check: %q, %v", check, err)
	}
	if err := sqlitestore.SetMaxPageCount(s, 1<<30); err != nil {
		t.Fatal(err)
	}
	add(t, s, big.Name, "") // once there is room
}

// TestPragmas checks the settings of the Store's connections.
func TestPragmas(t *testing.T) {
	path := newPath(t)
	open(t, path)
	for _, tt := range []struct {
		name string
		dsn  string
		want map[string]int64
	}{
		{"writer", sqlitestore.WriterDSN(path), map[string]int64{"synchronous": 2, "busy_timeout": 10000, "foreign_keys": 1, "query_only": 0}},
		{"reader", sqlitestore.ReaderDSN(path), map[string]int64{"synchronous": 2, "busy_timeout": 10000, "foreign_keys": 1, "query_only": 1}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			db, err := sql.Open("sqlite", tt.dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			got := map[string]int64{}
			for name := range tt.want {
				var v int64
				if err := db.QueryRow("PRAGMA " + name).Scan(&v); err != nil {
					t.Fatal(err)
				}
				got[name] = v
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("pragmas (-want +got):\n%s", diff)
			}
		})
	}
}

// TestOpenConcurrently opens one new file from several Stores at once: each
// migration is applied once, and every Store works.
func TestOpenConcurrently(t *testing.T) {
	path := newPath(t)
	const n = 4
	stores := make([]*sqlitestore.Store, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { stores[i], errs[i] = sqlitestore.Open(path) })
	}
	wg.Wait()
	for i, s := range stores {
		if errs[i] != nil {
			t.Fatalf("Open %d: %v", i, errs[i])
		}
		t.Cleanup(func() { s.Close() })
	}
	for i, s := range stores {
		add(t, s, fmt.Sprint("pet ", i), "")
	}
	if got := len(all(t, stores[0])); got != n {
		t.Errorf("%d pets, want %d", got, n)
	}
}
