package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"syscall"

	"github.com/petstore-go/petstore"
)

// minFree is the free space, in bytes, below which Check reports that the
// disk holding the data file cannot take writes.
const minFree = 1 << 20

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
	fi, err := os.Stat(s.file)
	switch {
	case err != nil:
		return unavailable("the data file is gone (%v); restart to open it again", err)
	case !os.SameFile(fi, s.opened):
		return unavailable("the data file was replaced since it was opened; restart to serve the new one")
	case fi.Mode().Perm()&0o222 == 0:
		return unavailable("the data file is read-only (mode %v); make it writable (chmod u+w)", fi.Mode().Perm())
	}
	if free, readOnly, err := diskSpace(s.file); err == nil {
		switch {
		case readOnly:
			return unavailable("the file system is mounted read-only")
		case free < minFree:
			return unavailable("the disk is full: %d bytes free; free some space", free)
		}
	}
	return s.idsLeft(ctx)
}

// diskSpace returns the bytes free to this process on the file system of
// path, and whether it is mounted read-only.
func diskSpace(path string) (free int64, readOnly bool, err error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return 0, false, err
	}
	return int64(st.Bavail) * int64(st.Bsize), st.Flags&stRDONLY != 0, nil
}

// stRDONLY is ST_RDONLY, the flag of a file system mounted read-only.
const stRDONLY = 0x1

// schemaObjects returns the rows of sqlite_schema of the database behind q,
// each as its type and SQL text, by name.
func schemaObjects(ctx context.Context, q querier) (map[string][2]string, error) {
	rows, err := q.QueryContext(ctx, "SELECT type, name, coalesce(sql, '') FROM sqlite_schema")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	objs := map[string][2]string{}
	for rows.Next() {
		var typ, name, text string
		if err := rows.Scan(&typ, &name, &text); err != nil {
			return nil, err
		}
		objs[name] = [2]string{typ, text}
	}
	return objs, rows.Err()
}

// checkSchema refuses the file behind q when its tables, indexes,
// triggers and views are not exactly those that the migrations make in a
// new database: a trigger or view planted in a file would run with every
// create or read. The error names each object that is extra, missing or
// different. It writes nothing to the file.
func checkSchema(ctx context.Context, q querier, file string) error {
	mem, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		return fmt.Errorf("sqlitestore: %w", err)
	}
	defer mem.Close()
	conn, err := mem.Conn(ctx)
	if err != nil {
		return fmt.Errorf("sqlitestore: %w", err)
	}
	defer conn.Close()
	if err := migrate(ctx, conn, ":memory:"); err != nil {
		return fmt.Errorf("sqlitestore: the schema to compare with: %w", err)
	}
	want, err := schemaObjects(ctx, conn)
	if err != nil {
		return fmt.Errorf("sqlitestore: the schema to compare with: %w", err)
	}
	got, err := schemaObjects(ctx, q)
	if err != nil {
		return fmt.Errorf("sqlitestore: %s: reading the schema: %w", file, err)
	}
	var problems []string
	for name, g := range got {
		w, ok := want[name]
		switch {
		case !ok:
			problems = append(problems, fmt.Sprintf("%s %q, which petstore does not make (DROP %s %q removes it)", g[0], name, strings.ToUpper(g[0]), name))
		case g != w:
			problems = append(problems, fmt.Sprintf("%s %q, which differs from the one petstore makes", g[0], name))
		}
	}
	for name, w := range want {
		if _, ok := got[name]; !ok {
			problems = append(problems, fmt.Sprintf("no %s %q, which petstore makes", w[0], name))
		}
	}
	if len(problems) == 0 {
		return nil
	}
	slices.Sort(problems)
	return fmt.Errorf("sqlitestore: %s: %w: it holds %s; a petstore file holds only the tables and indexes petstore makes: restore a backup that does not hold them, or remove them",
		file, ErrSchema, strings.Join(problems, "; "))
}

// ErrSchema is wrapped by the error of Open and Restore for a file whose
// tables, indexes, triggers or views are not exactly those petstore makes.
var ErrSchema = errors.New("sqlitestore: the file's schema is not petstore's")
