package sqlitestore_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/sqlitestore"
)

// TestFilesOwnerOnly checks that the data file and its -wal and -shm files
// are made owner-only, whatever the umask.
func TestFilesOwnerOnly(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	path := newPath(t)
	s := open(t, path)
	add(t, s, "Rex", "")
	for _, name := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Stat(name)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != 0o600 {
			t.Errorf("%s has mode %v; want 0600", name, got)
		}
	}
}

// TestOpenRefusesForeignFiles checks that Open refuses a data file, or a
// -wal or -shm file beside it, that another user could write: owned by
// another user, writable by group or others, or a symbolic link; with an
// error that names the file and the fix.
func TestOpenRefusesForeignFiles(t *testing.T) {
	const nobody = 65534
	tests := []struct {
		name     string
		root     bool // needs root, to give a file away
		setup    func(t *testing.T, path string) (culprit string)
		wantText string
	}{
		{"data file of another user", true, func(t *testing.T, path string) string {
			write(t, path, nil, 0o600)
			chown(t, path, nobody)
			return path
		}, "owned by uid 65534"},
		{"-wal file of another user", true, func(t *testing.T, path string) string {
			write(t, path+"-wal", nil, 0o666)
			chown(t, path+"-wal", nobody)
			return path + "-wal"
		}, "owned by uid 65534"},
		{"-shm file of another user", true, func(t *testing.T, path string) string {
			write(t, path+"-shm", nil, 0o600)
			chown(t, path+"-shm", nobody)
			return path + "-shm"
		}, "owned by uid 65534"},
		{"data file others may write", false, func(t *testing.T, path string) string {
			write(t, path, nil, 0o600)
			if err := os.Chmod(path, 0o666); err != nil {
				t.Fatal(err)
			}
			return path
		}, "chmod 600"},
		{"symbolic link", false, func(t *testing.T, path string) string {
			target := filepath.Join(t.TempDir(), "elsewhere.db")
			write(t, target, nil, 0o600)
			if err := os.Symlink(target, path); err != nil {
				t.Fatal(err)
			}
			return path
		}, "symbolic link"},
		{"dangling symbolic link", false, func(t *testing.T, path string) string {
			if err := os.Symlink(filepath.Join(t.TempDir(), "missing.db"), path); err != nil {
				t.Fatal(err)
			}
			return path
		}, "symbolic link"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.root && os.Geteuid() != 0 {
				t.Skip("giving a file to another user needs root")
			}
			path := newPath(t)
			culprit := tt.setup(t, path)
			before := dirEntries(t, path)
			_, err := sqlitestore.Open(path)
			if err == nil {
				t.Fatal("Open succeeded; want an error")
			}
			for _, want := range []string{culprit, tt.wantText} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("Open: %v; want an error that says %q", err, want)
				}
			}
			if after := dirEntries(t, path); strings.Join(after, ",") != strings.Join(before, ",") {
				t.Errorf("Open changed the files beside %s: %v, then %v", path, before, after)
			}
		})
	}
}

func chown(t *testing.T, path string, uid int) {
	t.Helper()
	if err := os.Lchown(path, uid, uid); err != nil {
		t.Fatal(err)
	}
}

// TestWALBounded checks that a reader holding a snapshot lets the -wal
// file grow past its limit, which WALSize and CheckpointsBlocked show, and
// that once it lets go the file comes back under the limit while creates
// go on.
func TestWALBounded(t *testing.T) {
	const limit = 256 << 10
	path := newPath(t)
	s := open(t, path)
	sqlitestore.SetWALLimit(s, limit)
	add(t, s, "first", "")
	ctx := context.Background()
	reader, err := rawDB(t, path).Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	if _, err := reader.ExecContext(ctx, "BEGIN"); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := reader.QueryRowContext(ctx, "SELECT count(*) FROM pets").Scan(&n); err != nil {
		t.Fatal(err)
	}
	name := strings.Repeat("x", 200)
	grow := func(until func(size int64) bool) int64 {
		t.Helper()
		deadline := time.Now().Add(time.Minute)
		for {
			for range 100 {
				add(t, s, name, "")
			}
			size, err := s.WALSize()
			if err != nil {
				t.Fatal(err)
			}
			if until(size) {
				return size
			}
			if time.Now().After(deadline) {
				t.Fatalf("the -wal file stayed at %d bytes", size)
			}
		}
	}
	pinned := grow(func(size int64) bool { return size > 2*limit && s.CheckpointsBlocked() > 0 })
	t.Logf("with a reader holding a snapshot: %d bytes, %d checkpoints blocked", pinned, s.CheckpointsBlocked())
	if _, err := reader.ExecContext(ctx, "COMMIT"); err != nil {
		t.Fatal(err)
	}
	after := grow(func(size int64) bool { return size <= limit })
	t.Logf("after the reader let go: %d bytes", after)
}

// TestCheck checks that Check passes on a store that can take writes and
// reports, wrapping petstore.ErrUnavailable, a data file made read-only or
// replaced.
func TestCheck(t *testing.T) {
	ctx := context.Background()
	path := newPath(t)
	s := open(t, path)
	if err := s.Check(ctx); err != nil {
		t.Fatalf("Check on a new store: %v", err)
	}
	if err := os.Chmod(path, 0o400); err != nil {
		t.Fatal(err)
	}
	if err := s.Check(ctx); !errors.Is(err, petstore.ErrUnavailable) || !strings.Contains(err.Error(), "read-only") {
		t.Errorf("Check on a read-only file: %v; want ErrUnavailable saying read-only", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := s.Check(ctx); err != nil {
		t.Errorf("Check once writable again: %v", err)
	}
	if err := os.Rename(path, path+".moved"); err != nil {
		t.Fatal(err)
	}
	write(t, path, nil, 0o600)
	if err := s.Check(ctx); !errors.Is(err, petstore.ErrUnavailable) || !strings.Contains(err.Error(), "replaced") {
		t.Errorf("Check after the file was replaced: %v; want ErrUnavailable saying replaced", err)
	}
}

// TestCheckFullDisk fills a small tmpfs that holds the data file: Check
// says the disk is full. It needs root, to mount one.
func TestCheckFullDisk(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=4m"); err != nil {
		t.Skipf("mounting a tmpfs: %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, 0) })
	ctx := context.Background()
	s, err := sqlitestore.Open(filepath.Join(dir, "pets.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	add(t, s, "Rex", "")
	if err := s.Check(ctx); err != nil {
		t.Fatalf("Check with room on the disk: %v", err)
	}
	filler, err := os.Create(filepath.Join(dir, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	defer filler.Close()
	chunk := make([]byte, 64<<10)
	for {
		if _, err := filler.Write(chunk); err != nil {
			break // the disk is full
		}
	}
	if err := s.Check(ctx); !errors.Is(err, petstore.ErrUnavailable) || !strings.Contains(err.Error(), "disk is full") {
		t.Errorf("Check on a full disk: %v; want ErrUnavailable saying the disk is full", err)
	}
	_, _, err = s.Add(ctx, petstore.NewPet{Name: strings.Repeat("y", 200), CategoryID: 1}, petstore.AddOptions{})
	t.Logf("a create on the full disk: %v", err)
}
