package sqlitestore_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/petstoretest"
	"github.com/petstore-go/petstore/sqlitestore"
)

// TestBackupDurability runs the durability suite on backups: each open
// after the first opens the backup taken while the previous store was
// open, so every pet, ID and key the suite checks has gone through a
// backup.
func TestBackupDurability(t *testing.T) {
	petstoretest.TestDurability(t, func(t *testing.T) petstoretest.OpenFunc {
		dir := t.TempDir()
		path := filepath.Join(dir, "pets.db")
		n := 0
		return func(t *testing.T) (petstore.Store, func() error) {
			s := open(t, path)
			return s, func() error {
				// The suite closes while creates may be in flight: the
				// backup is taken after close, so that it holds their
				// outcome, and the next open serves it.
				if err := s.Close(); err != nil {
					return err
				}
				n++
				next := filepath.Join(dir, fmt.Sprintf("backup-%d.db", n))
				if _, err := sqlitestore.Backup(context.Background(), path, next); err != nil {
					return err
				}
				path = next
				return nil
			}
		}
	})
}

// TestBackupWhileWriting takes a backup while 16 callers create pets,
// keyed and unkeyed, and checks that it holds every pet acknowledged
// before it began, with its key, and that no create failed.
func TestBackupWhileWriting(t *testing.T) {
	ctx := context.Background()
	path := newPath(t)
	s := open(t, path)
	for i := range 2000 {
		add(t, s, fmt.Sprintf("seed %d", i), "")
	}
	var (
		mu     sync.Mutex
		acked  []petstore.Pet
		keys   = map[int64]string{}
		stop   atomic.Bool
		failed atomic.Int64
		wg     sync.WaitGroup
	)
	for w := range 16 {
		wg.Go(func() {
			for i := 0; !stop.Load(); i++ {
				key := ""
				if i%2 == 0 {
					key = fmt.Sprintf("w%d-%d", w, i)
				}
				p, _, err := s.Add(petstore.WithPrincipal(ctx, "alice"), petstore.NewPet{Name: fmt.Sprintf("w%d %d", w, i), CategoryID: 1}, petstore.AddOptions{IdempotencyKey: key})
				if err != nil {
					failed.Add(1)
					t.Errorf("Add: %v", err)
					return
				}
				mu.Lock()
				acked = append(acked, p)
				if key != "" {
					keys[p.ID] = key
				}
				mu.Unlock()
			}
		})
	}
	waitFor(t, "creates are under way", func() bool { mu.Lock(); defer mu.Unlock(); return len(acked) > 500 })
	mu.Lock()
	before := len(acked)
	mu.Unlock()
	dst := filepath.Join(t.TempDir(), "backup.db")
	info, err := sqlitestore.Backup(ctx, path, dst)
	stop.Store(true)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(dst); err != nil || fi.Mode().Perm() != 0o600 || fi.Size() != info.Bytes {
		t.Errorf("backup %s: %v, %v; want mode 0600 and %d bytes", dst, fi.Mode(), err, info.Bytes)
	}
	b := open(t, dst)
	got := all(t, b)
	if int64(len(got)) != info.Pets {
		t.Errorf("BackupInfo.Pets = %d; the backup holds %d", info.Pets, len(got))
	}
	byID := map[int64]petstore.Pet{}
	for _, p := range got {
		byID[p.ID] = p
	}
	for _, p := range acked[:before] {
		if diff := cmp.Diff(p, byID[p.ID]); diff != "" {
			t.Fatalf("pet %d, acknowledged before the backup began (-want +backup):\n%s", p.ID, diff)
		}
		if key, ok := keys[p.ID]; ok {
			r, replayed, err := b.Add(petstore.WithPrincipal(ctx, "alice"), p.NewPet, petstore.AddOptions{IdempotencyKey: key})
			if err != nil || !replayed || r != p {
				t.Fatalf("keyed retry of pet %d on the backup: %v, replayed %v, %v; want it replayed", p.ID, r, replayed, err)
			}
		}
	}
	// What the backup holds is a prefix of the store's pets, in ID order:
	// a snapshot, with no pet missing before its last.
	live := all(t, s)
	if diff := cmp.Diff(live[:len(got)], got); diff != "" {
		t.Errorf("the backup is not a prefix of the store (-store +backup):\n%s", diff)
	}
	t.Logf("backup of %d pets, %d bytes, in %v, under %d creates", info.Pets, info.Bytes, info.Duration, len(acked))
}

// TestBackupRefuses checks that Backup and Restore refuse a source that is
// no petstore data file, or of a newer schema, and that Backup refuses a
// destination in use as one, and that they write nothing.
func TestBackupRefuses(t *testing.T) {
	tests := []struct {
		name     string
		setup    func(t *testing.T) (src, dst string)
		wantText string
	}{
		{"missing source", func(t *testing.T) (string, string) {
			return newPath(t), newPath(t)
		}, "does not exist"},
		{"not a database", func(t *testing.T) (string, string) {
			src := newPath(t)
			write(t, src, []byte(strings.Repeat("not a database\n", 500)), 0o600)
			return src, newPath(t)
		}, "not a SQLite database"},
		{"empty database", func(t *testing.T) (string, string) {
			src := newPath(t)
			execSQL(t, src, "CREATE TABLE t (x)")
			return src, newPath(t)
		}, "not a petstore data file"},
		{"newer schema", func(t *testing.T) (string, string) {
			src := newPath(t)
			closeStore(t, open(t, src))
			execSQL(t, src, fmt.Sprintf("PRAGMA user_version = %d", sqlitestore.SchemaVersion+1), "PRAGMA journal_mode = DELETE")
			return src, newPath(t)
		}, "newer version"},
		{"destination in use", func(t *testing.T) (string, string) {
			src, dst := newPath(t), newPath(t)
			open(t, src)
			open(t, dst)
			return src, dst
		}, "-wal file beside it"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src, dst := tt.setup(t)
			before := dirEntries(t, dst)
			_, err := sqlitestore.Backup(context.Background(), src, dst)
			if err == nil || !strings.Contains(err.Error(), tt.wantText) {
				t.Fatalf("Backup: %v; want an error that says %q", err, tt.wantText)
			}
			// A destination in use is Restore's to refuse too, as TestRestore
			// checks, but with ErrInUse.
			if _, err := sqlitestore.Restore(context.Background(), src, dst); tt.name != "destination in use" && (err == nil || !strings.Contains(err.Error(), tt.wantText)) {
				t.Errorf("Restore: %v; want an error that says %q", err, tt.wantText)
			}
			if diff := cmp.Diff(before, dirEntries(t, dst)); diff != "" {
				t.Errorf("files beside the destination (-before +after):\n%s", diff)
			}
		})
	}
}

// TestRestore checks that Restore refuses while a store has the file
// open, replaces it once none has, keeps the file it replaced, and refuses
// a backup that Open would refuse.
func TestRestore(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "pets.db")
	backup := filepath.Join(dir, "backup.db")
	s := open(t, path)
	old := add(t, s, "in the backup", "k1")
	if _, err := sqlitestore.Backup(ctx, path, backup); err != nil {
		t.Fatal(err)
	}
	add(t, s, "after the backup", "k2")
	if _, err := sqlitestore.Restore(ctx, backup, path); !errors.Is(err, sqlitestore.ErrInUse) {
		t.Fatalf("Restore while a store is open: %v; want ErrInUse", err)
	}
	closeStore(t, s)
	replaced, err := sqlitestore.Restore(ctx, backup, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + "-wal"); err == nil {
		t.Errorf("%s-wal is left beside the restored file", path)
	}
	r := open(t, path)
	if diff := cmp.Diff([]petstore.Pet{old}, all(t, r)); diff != "" {
		t.Errorf("restored pets (-want +got):\n%s", diff)
	}
	if p := add(t, r, "in the backup", "k1"); p != old {
		t.Errorf("keyed retry on the restored file gave %v; want %v replayed", p, old)
	}
	if got := len(all(t, open(t, replaced))); got != 2 {
		t.Errorf("the replaced file %s holds %d pets; want 2", replaced, got)
	}

}

// TestForeignSchemaRefused checks that Restore and Open refuse a file that
// holds a table, index, trigger or view that petstore does not make, or
// lacks one that it makes, naming the object, and leave the data file as
// it was.
func TestForeignSchemaRefused(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name, stmt, want string
	}{
		{"trigger", "CREATE TRIGGER t AFTER INSERT ON pets BEGIN DELETE FROM pets WHERE id < 5; END", `trigger "t"`},
		{"view", "CREATE VIEW v AS SELECT id FROM pets", `view "v"`},
		{"table", "CREATE TABLE extra (x)", `table "extra"`},
		{"index", "CREATE INDEX pets_name ON pets (name)", `index "pets_name"`},
		{"dropped index", "DROP INDEX pets_status_id", `no index "pets_status_id"`},
		{"changed index", "DROP INDEX pets_status_id; CREATE INDEX pets_status_id ON pets (id, status)", `index "pets_status_id", which differs`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "pets.db")
			backup := filepath.Join(dir, "backup.db")
			s := open(t, path)
			for range 5 {
				add(t, s, "kept", "")
			}
			if _, err := sqlitestore.Backup(ctx, path, backup); err != nil {
				t.Fatal(err)
			}
			execSQL(t, backup, tt.stmt, "PRAGMA journal_mode = DELETE")
			closeStore(t, s)
			_, err := sqlitestore.Restore(ctx, backup, path)
			if !errors.Is(err, sqlitestore.ErrSchema) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Restore: %v; want ErrSchema naming %s", err, tt.want)
			}
			if _, err := sqlitestore.Open(backup); !errors.Is(err, sqlitestore.ErrSchema) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Open: %v; want ErrSchema naming %s", err, tt.want)
			}
			if n := len(all(t, open(t, path))); n != 5 {
				t.Errorf("the data file holds %d pets after the refused restore; want 5", n)
			}
		})
	}
}

// TestRestoreNeverReissuesIDs checks that a store restored from a backup
// issues IDs above every ID that the file it replaced had issued, pets
// deleted since included, even when the backup holds no pet.
func TestRestoreNeverReissuesIDs(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name          string
		before, after int // pets added before and after the backup
		deleteLast    bool
	}{
		{"pets after the backup", 3, 2, false},
		{"empty backup", 0, 3, false},
		{"largest deleted", 2, 3, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "pets.db")
			backup := filepath.Join(dir, "backup.db")
			s := open(t, path)
			for range tt.before {
				add(t, s, "in the backup", "")
			}
			if _, err := sqlitestore.Backup(ctx, path, backup); err != nil {
				t.Fatal(err)
			}
			var last petstore.Pet
			for range tt.after {
				last = add(t, s, "after the backup", "")
			}
			closeStore(t, s)
			if tt.deleteLast {
				execSQL(t, path, fmt.Sprintf("DELETE FROM pets WHERE id = %d", last.ID))
			}
			if _, err := sqlitestore.Restore(ctx, backup, path); err != nil {
				t.Fatal(err)
			}
			if next := add(t, open(t, path), "after the restore", ""); next.ID <= last.ID {
				t.Errorf("the first pet after the restore has ID %d; want above %d, the largest the replaced file issued", next.ID, last.ID)
			}
			if _, err := os.Lstat(path + "-journal"); err == nil {
				t.Errorf("%s-journal is left beside the restored file", path)
			}
		})
	}
}

// TestRestoreStaleJournal checks that Restore removes the hot journal that
// a Restore killed while it carried the ID sequence into its copy leaves
// beside that copy: SQLite would roll the old copy's pages in it back into
// the new copy.
func TestRestoreStaleJournal(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "pets.db")
	backup := filepath.Join(dir, "backup.db")
	copied := filepath.Join(dir, ".pets.db.restore")
	s := open(t, path)
	old := add(t, s, "in the backup", "k1")
	if _, err := sqlitestore.Backup(ctx, path, backup); err != nil {
		t.Fatal(err)
	}
	closeStore(t, s)
	execSQL(t, path, `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000)
INSERT INTO pets (name, category_id) SELECT hex(randomblob(100)), 1 FROM n`)
	if _, err := sqlitestore.Backup(ctx, path, copied); err != nil {
		t.Fatal(err)
	}
	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), journalEnv+"="+copied)
	out, err := child.CombinedOutput()
	if _, jerr := os.Lstat(copied + "-journal"); err == nil || err.Error() != "signal: killed" || jerr != nil {
		t.Fatalf("the child that writes the journal: %v, %s; the journal: %v", err, out, jerr)
	}

	if _, err := sqlitestore.Restore(ctx, backup, path); err != nil {
		t.Fatal(err)
	}
	r := open(t, path) // which runs quick_check
	if diff := cmp.Diff([]petstore.Pet{old}, all(t, r)); diff != "" {
		t.Errorf("restored pets (-want +got):\n%s", diff)
	}
	if next := add(t, r, "after the restore", ""); next.ID <= 2001 {
		t.Errorf("the first pet after the restore has ID %d; want above 2001, the largest the replaced file issued", next.ID)
	}
}
