package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/internal/options"
	"github.com/petstore-go/petstore/internal/sqlstore"
	"github.com/petstore-go/petstore/internal/wake"
	sqlite3 "modernc.org/sqlite/lib"
)

var _ petstore.Store = (*Store)(nil)

// busyTimeout is how long a statement waits for a lock held by another
// connection before it fails with SQLITE_BUSY (petstore.ErrUnavailable).
const busyTimeout = 10 * time.Second

// Store is a petstore.Store that keeps pets in a SQLite file. It is safe
// for concurrent use. Open it with Open and close it with Close.
type Store struct {
	file string
	opt  sqlstore.Options // the key retention, clock and logger

	wdb *sql.DB   // the writer: one connection, pinned as w
	w   *sql.Conn // used only by the batch in flight, by Open and by Close
	rdb *sql.DB   // the readers: a pool, read-only

	// Statements of the writer, prepared once on w.
	begin, commitTx, insertPet, insertKey, lookupKey, deleteKey, pruneKeys *sql.Stmt
	// Statements of the readers, prepared on each read connection as needed.
	getPet, listPets, listStatus *sql.Stmt

	adds sqlstore.Queue[*addCall] // the Adds waiting to be written together

	closeOnce sync.Once
	closeErr  error
	closed    atomic.Bool

	pruned    atomic.Int64 // keys forgotten since Open
	commits   atomic.Int64 // write transactions committed by Add, for tests
	nextPrune time.Time    // the earliest time of the next pass; used only by the batch in flight

	// The -wal file's bound (see boundWAL).
	walMax     int64        // walLimit, but in tests
	nextWAL    time.Time    // the earliest time of the next look; used only by the batch in flight
	walBlocked atomic.Int64 // checkpoints that a reader kept from finishing

	opened os.FileInfo // the data file as opened, for Check

	wakes wake.Set // the watchers of NotifyAdds
}

// Open opens the SQLite file at path, or creates it when it does not exist,
// upgrades its schema to SchemaVersion and returns a Store that keeps its
// pets there. It refuses, with an error that names the file, what the
// package doc lists, leaving a file as it was; invalid options are reported
// together, each with its fix.
func Open(path string, opts ...Option) (*Store, error) {
	c := sqlstore.DefaultOptions()
	if err := options.Apply(&c, opts, Option.apply); err != nil {
		return nil, fmt.Errorf("sqlitestore.Open: %w", err)
	}
	file, err := checkPath(path)
	if err != nil {
		return nil, err
	}
	warnSharedDir(file, c.Logger)
	if _, err := os.Lstat(file); errors.Is(err, fs.ErrNotExist) {
		// Owner-only (0600), refusing to follow a symbolic link or to take a
		// file that appeared meanwhile; SQLite then creates the -wal and -shm
		// files with the same mode. Another Store may make it first; then it
		// is checked as any file. checkPath has checked one that existed.
		f, err := os.OpenFile(file, os.O_RDWR|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
		if err == nil {
			// The umask may have taken owner read or write away.
			err = errors.Join(f.Chmod(0o600), f.Close())
		}
		if err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("sqlitestore.Open: %s: create: %w", file, err)
		}
		if err := checkOwnership(file); err != nil {
			return nil, err
		}
	}
	s := &Store{file: file, opt: c, walMax: walLimit}
	s.adds.Max, s.adds.Write = maxBatch, s.write
	err = s.open()
	if err == nil {
		// Again, now that SQLite has opened or made the -wal and -shm
		// files: another user may have made them meanwhile.
		err = checkOwnership(file)
	}
	if err == nil {
		s.opened, err = os.Stat(file)
	}
	if err != nil {
		s.closeHandles()
		return nil, err
	}
	return s, nil
}

// checkPath returns the absolute form of path, or an error that names it
// and says why no store can be kept there.
func checkPath(path string) (string, error) {
	if path == "" {
		return "", errors.New(`sqlitestore.Open: the path is empty; give a file name such as "petstore.db"`)
	}
	file, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("sqlitestore.Open: %s: %w", path, err)
	}
	if strings.ContainsRune(file, '?') {
		return "", fmt.Errorf("sqlitestore.Open: %s: the path contains '?', which SQLite's driver reads as the start of options; rename the file", file)
	}
	if err := checkOwnership(file); err != nil {
		return "", err
	}
	fi, err := os.Stat(file)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if di, err := os.Stat(filepath.Dir(file)); err != nil || !di.IsDir() {
			return "", fmt.Errorf("sqlitestore.Open: %s: the directory %s does not exist, or is no directory; create it first", file, filepath.Dir(file))
		}
		return file, nil // SQLite creates it
	case err != nil:
		return "", fmt.Errorf("sqlitestore.Open: %s: %w", file, err)
	case fi.IsDir():
		return "", fmt.Errorf("sqlitestore.Open: %s is a directory; give the path of a file in it, such as %s", file, filepath.Join(file, "petstore.db"))
	case !fi.Mode().IsRegular():
		return "", fmt.Errorf("sqlitestore.Open: %s is not a regular file", file)
	}
	// Refused even when this process could write it anyway (as root can):
	// a file without write permission was made read-only on purpose.
	if fi.Mode().Perm()&0o222 == 0 {
		return "", fmt.Errorf("sqlitestore.Open: %s is read-only (mode %v); a store must write its file: make it writable (chmod u+w) or give another path", file, fi.Mode().Perm())
	}
	f, err := os.OpenFile(file, os.O_RDWR, 0)
	if err != nil {
		return "", fmt.Errorf("sqlitestore.Open: %s cannot be opened for writing; a store must write its file: %w", file, err)
	}
	_ = f.Close() // opened only to check; nothing written
	return file, nil
}

// dsn returns the data source name of a connection to file with params
// and the pragmas of every connection: busy_timeout, so that a connection
// that finds the file locked waits; synchronous=FULL, so that every commit
// is on the disk (fsync) before Add returns and survives a power loss, which
// NORMAL, common with WAL, does not promise; foreign_keys, so that a key
// must name a stored pet. journal_mode=WAL is kept in the file (open sets
// it): readers read the last commit and never wait for the writer.
func dsn(file string, params url.Values) string {
	params.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyTimeout.Milliseconds()))
	params.Add("_pragma", "synchronous(FULL)")
	params.Add("_pragma", "foreign_keys(ON)")
	return file + "?" + params.Encode()
}

// writerDSN returns the data source name of the writer's connection:
// BEGIN takes the write lock before it reads (IMMEDIATE), since a deferred
// transaction that reads and then writes fails with SQLITE_BUSY_SNAPSHOT
// when another connection wrote in between.
func writerDSN(file string) string {
	return dsn(file, url.Values{"_txlock": {"immediate"}})
}

// readerDSN returns the data source name of a reader's connection to file:
// it refuses to write.
func readerDSN(file string) string {
	return dsn(file, url.Values{"_pragma": {"query_only(ON)"}})
}

// The Store's statements. Each reads or writes through one index: a test
// checks their plans.
const (
	sqlInsertPet = `INSERT INTO pets (name, category_id, status) VALUES (?, ?, NULLIF(?, ''))`
	sqlInsertKey = `INSERT INTO pet_keys (principal, key, pet_id, created_at) VALUES (?, ?, ?, ?)`
	sqlLookupKey = `SELECT k.created_at, p.id, p.name, p.category_id, coalesce(p.status, '')
FROM pet_keys k JOIN pets p ON p.id = k.pet_id WHERE k.principal = ? AND k.key = ?`
	sqlDeleteKey = `DELETE FROM pet_keys WHERE principal = ? AND key = ?`
	// The oldest keys first, at most a step of them.
	sqlPruneKeys = `DELETE FROM pet_keys WHERE (principal, key) IN
(SELECT principal, key FROM pet_keys WHERE created_at < ? ORDER BY created_at LIMIT ?)`
	sqlGet  = `SELECT name, category_id, coalesce(status, '') FROM pets WHERE id = ?`
	sqlList = `SELECT id, name, category_id, coalesce(status, '') FROM pets WHERE id > ? ORDER BY id LIMIT ?`
	// With status fixed, the (status, id) index gives the rows in ID order.
	sqlListStatus = `SELECT id, name, category_id, status FROM pets WHERE status = ? AND id > ? ORDER BY id LIMIT ?`
)

// open opens the connections, checks and migrates the file, and prepares
// the statements.
func (s *Store) open() error {
	ctx := context.Background()
	fail := func(op string, err error) error {
		if strings.HasPrefix(err.Error(), "sqlitestore: ") {
			return err // it names the file and the reason already
		}
		if code(err) == sqlite3.SQLITE_NOTADB {
			return fmt.Errorf("sqlitestore.Open: %s is not a SQLite database; give the path of a petstore database or of a new file: %w", s.file, err)
		}
		return fmt.Errorf("sqlitestore.Open: %s: %s: %w", s.file, op, err)
	}
	var err error
	if s.wdb, err = sql.Open("sqlite", writerDSN(s.file)); err != nil {
		return fail("open", err)
	}
	s.wdb.SetMaxOpenConns(1) // which also caps the idle connections at 1
	if s.w, err = s.wdb.Conn(ctx); err != nil {
		return fail("open", err)
	}
	// Read before anything is written: a file that this version must not
	// touch is left exactly as it was, journal mode included.
	if _, _, err := readHeader(ctx, s.w, s.file); err != nil {
		return fail("read the header", err)
	}
	// Another Store that makes the file at the same time may hold a lock
	// that SQLite does not wait for here: it answers SQLITE_BUSY at once.
	var mode string
	for start := time.Now(); ; time.Sleep(time.Millisecond) {
		err = s.w.QueryRowContext(ctx, "PRAGMA journal_mode = WAL").Scan(&mode)
		if code(err) != sqlite3.SQLITE_BUSY || time.Since(start) > busyTimeout {
			break
		}
	}
	if err != nil {
		return fail("set WAL mode", err)
	}
	if !strings.EqualFold(mode, "wal") {
		return fail("set WAL mode", fmt.Errorf("the journal mode stayed %q", mode))
	}
	if err := migrate(ctx, s.w, s.file); err != nil {
		return fail("migrate", err)
	}
	if err := checkFile(ctx, s.w, s.file); err != nil {
		return err
	}
	if _, err := s.w.ExecContext(ctx, fmt.Sprintf("PRAGMA journal_size_limit = %d", walLimit)); err != nil {
		return fail("set the journal size limit", err)
	}
	if s.rdb, err = sql.Open("sqlite", readerDSN(s.file)); err != nil {
		return fail("open", err)
	}
	n := max(4, runtime.GOMAXPROCS(0))
	s.rdb.SetMaxOpenConns(n)
	s.rdb.SetMaxIdleConns(n)
	prepare := func(conn querier, query string) *sql.Stmt {
		if err != nil {
			return nil
		}
		var st *sql.Stmt
		st, err = conn.PrepareContext(ctx, query)
		return st
	}
	s.begin = prepare(s.w, "BEGIN IMMEDIATE")
	s.commitTx = prepare(s.w, "COMMIT")
	s.insertPet = prepare(s.w, sqlInsertPet)
	s.insertKey = prepare(s.w, sqlInsertKey)
	s.lookupKey = prepare(s.w, sqlLookupKey)
	s.deleteKey = prepare(s.w, sqlDeleteKey)
	s.pruneKeys = prepare(s.w, sqlPruneKeys)
	s.getPet = prepare(s.rdb, sqlGet)
	s.listPets = prepare(s.rdb, sqlList)
	s.listStatus = prepare(s.rdb, sqlListStatus)
	if err != nil {
		return fail("check the schema", err)
	}
	return nil
}

// closeHandles closes whatever open opened, and returns the first error.
func (s *Store) closeHandles() error {
	var errs []error
	for _, st := range []*sql.Stmt{s.begin, s.commitTx, s.insertPet, s.insertKey, s.lookupKey, s.deleteKey, s.pruneKeys, s.getPet, s.listPets, s.listStatus} {
		if st != nil {
			errs = append(errs, st.Close())
		}
	}
	if s.w != nil {
		errs = append(errs, s.w.Close())
	}
	if s.wdb != nil {
		errs = append(errs, s.wdb.Close())
	}
	if s.rdb != nil {
		errs = append(errs, s.rdb.Close())
	}
	return errors.Join(errs...)
}

// Path returns the absolute path of the Store's file.
func (s *Store) Path() string { return s.file }

// PrunedKeys returns the number of idempotency keys that the Store has
// forgotten since Open, because their retention had passed.
func (s *Store) PrunedKeys() int64 { return s.pruned.Load() }

// Close waits for the calls of Add in flight, then closes the file. Calls
// made after Close has begun return an error wrapping ErrClosed and
// petstore.ErrUnavailable. Close returns the same result every time it is
// called.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.closed.Store(true)
		s.adds.Close() // no new Add joins; wait for those that did
		if err := s.closeHandles(); err != nil {
			s.closeErr = fmt.Errorf("sqlitestore: %s: close: %w", s.file, err)
		}
	})
	return s.closeErr
}

// Get returns the pet with the given ID, or an error wrapping
// petstore.ErrNotFound. It reads from the file's last commit and never waits
// for a write in progress.
func (s *Store) Get(ctx context.Context, id int64) (petstore.Pet, error) {
	if s.closed.Load() {
		return petstore.Pet{}, closedError(s.file, "get pet")
	}
	pet := petstore.Pet{ID: id}
	switch err := s.getPet.QueryRowContext(ctx, id).Scan(&pet.Name, &pet.CategoryID, &pet.Status); {
	case errors.Is(err, sql.ErrNoRows):
		return petstore.Pet{}, fmt.Errorf("sqlitestore: pet %d: %w", id, petstore.ErrNotFound)
	case err != nil:
		return petstore.Pet{}, s.readError(ctx, fmt.Sprintf("get pet %d", id), err)
	}
	return pet, nil
}

// readError wraps an error of a read, the way wrapError does, and as
// ErrClosed when Close closed the readers during the call.
func (s *Store) readError(ctx context.Context, op string, err error) error {
	if s.closed.Load() && ctx.Err() == nil {
		return closedError(s.file, op)
	}
	return wrapError(ctx, s.file, op, err)
}

// List returns the pets that opts selects, ascending by ID. Every List is a
// range scan of an index from opts.After on. It reads from the file's last
// commit and never waits for a write in progress.
func (s *Store) List(ctx context.Context, opts petstore.ListOptions) ([]petstore.Pet, error) {
	if s.closed.Load() {
		return nil, closedError(s.file, "list pets")
	}
	limit := int64(-1) // SQLite: no limit
	size := 16
	if opts.Limit > 0 {
		limit = int64(opts.Limit)
		size = min(opts.Limit, 128)
	}
	var (
		rows *sql.Rows
		err  error
	)
	if opts.Status == "" {
		rows, err = s.listPets.QueryContext(ctx, opts.After, limit)
	} else {
		rows, err = s.listStatus.QueryContext(ctx, string(opts.Status), opts.After, limit)
	}
	if err != nil {
		return nil, s.readError(ctx, "list pets", err)
	}
	defer rows.Close()
	pets := make([]petstore.Pet, 0, size)
	var p petstore.Pet
	for rows.Next() {
		if err := rows.Scan(&p.ID, &p.Name, &p.CategoryID, &p.Status); err != nil {
			return nil, s.readError(ctx, "list pets", err)
		}
		pets = append(pets, p)
	}
	if err := rows.Err(); err != nil {
		return nil, s.readError(ctx, "list pets", err)
	}
	return pets, nil
}
