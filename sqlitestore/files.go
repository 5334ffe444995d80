package sqlitestore

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
)

// checkOwnership refuses a data file, or its -wal or -shm file, that
// another user could write, and so rewrite pets or plant a key. Files that
// do not exist are fine: SQLite creates them with the data file's mode.
func checkOwnership(file string) error {
	for _, name := range []string{file, file + "-wal", file + "-shm"} {
		fi, err := os.Lstat(name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("sqlitestore.Open: %s: %w", name, err)
		}
		err = checkOwner(name, fi, "a store opens only a regular file it owns: give the path of the file itself",
			"read and change the pets; if it is yours, chown it; if not, remove it, or keep the data file in a directory that only you may write",
			"change the pets; make it owner-only: chmod 600")
		if err != nil {
			return fmt.Errorf("sqlitestore.Open: %w", err)
		}
	}
	return nil
}

// checkOwner refuses name, which fi (from Lstat) describes, when another
// user could write it: a symbolic link, a file owned by another user, or
// one that the group or others may write. Each error ends with its advice:
// linkFix, or what that user could then do, owner and mode.
func checkOwner(name string, fi fs.FileInfo, linkFix, owner, mode string) error {
	if fi.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("%s is a symbolic link; %s", name, linkFix)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("%s is owned by uid %d, not by this process's user (uid %d), who could then %s", name, st.Uid, os.Geteuid(), owner)
	}
	if perm := fi.Mode().Perm(); perm&0o022 != 0 {
		return fmt.Errorf("%s may be written by other users (mode %v), who could then %s %s", name, perm, mode, name)
	}
	return nil
}

// warnSharedDir logs a warning when others may write the directory of
// file: they may then create, replace or (without the sticky bit) remove
// the files beside it.
func warnSharedDir(file string, logger *slog.Logger) {
	dir := filepath.Dir(file)
	fi, err := os.Stat(dir)
	if err != nil || fi.Mode().Perm()&0o002 == 0 {
		return
	}
	logger.Warn("sqlitestore: the data file's directory may be written by every user, who may create files beside it; keep the data file in a directory of its own",
		slog.String("path", file), slog.String("directory", dir), slog.String("mode", fi.Mode().String()))
}
