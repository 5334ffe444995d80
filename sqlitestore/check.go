package sqlitestore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"

	"github.com/petstore-go/petstore"
)

// minFree is the free space, in bytes, below which Check reports that the
// disk holding the data file cannot take writes.
const minFree = 1 << 20

// A fileID identifies a file across renames.
type fileID struct{ dev, ino uint64 }

// statID returns the identity of the file at path.
func statID(path string) (fileID, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return fileID{}, fmt.Errorf("sqlitestore: %w", err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, nil
	}
	return fileID{uint64(st.Dev), st.Ino}, nil
}

// Check reports whether the Store can take writes now, with an error
// wrapping petstore.ErrUnavailable that says why not, and nil otherwise.
// It writes nothing and holds up no write (it reads one row, as a reader),
// so a readiness probe may call it often. It refuses:
//
//   - a data file that was removed or replaced by another since Open;
//   - a data file without write permission;
//   - a file system mounted read-only, or with less than 1 MiB free;
//   - a file that has issued the last ID there is, with an error that wraps
//     no ErrUnavailable, since no retry helps (see Import).
func (s *Store) Check(ctx context.Context) error {
	if s.closed.Load() {
		return closedError(s.file, "check")
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("sqlitestore: %s: check: %w", s.file, err)
	}
	unavailable := func(format string, args ...any) error {
		return fmt.Errorf("sqlitestore: %s: %w: %s", s.file, petstore.ErrUnavailable, fmt.Sprintf(format, args...))
	}
	id, err := statID(s.file)
	switch {
	case err != nil:
		return unavailable("the data file is gone (%v); restart to open it again", errors.Unwrap(err))
	case id != s.inode:
		return unavailable("the data file was replaced since it was opened; restart to serve the new one")
	}
	fi, err := os.Stat(s.file)
	if err != nil {
		return unavailable("%v", err)
	}
	if fi.Mode().Perm()&0o222 == 0 {
		return unavailable("the data file is read-only (mode %v); make it writable (chmod u+w)", fi.Mode().Perm())
	}
	var fsst syscall.Statfs_t
	if err := syscall.Statfs(s.file, &fsst); err == nil {
		free := int64(fsst.Bavail) * int64(fsst.Bsize)
		switch {
		case fsst.Flags&stRDONLY != 0:
			return unavailable("the file system is mounted read-only")
		case free < minFree:
			return unavailable("the disk is full: %d bytes free; free some space", free)
		}
	}
	return s.idsLeft(ctx)
}

// stRDONLY is ST_RDONLY, the flag of a file system mounted read-only.
const stRDONLY = 0x1
