// Package sqlitestore is a petstore.Store that keeps pets in a SQLite file,
// through modernc.org/sqlite: pure Go, so no cgo and no server to install.
// It is the store for one machine; pgstore is the one for several.
//
// Typical use is:
//
//	store, err := sqlitestore.Open("petstore.db") // created when missing
//	if err != nil {
//		...
//	}
//	defer store.Close()
//	api, err := petstore.New(petstore.WithStore(store), ...)
//
// Open creates the file when it does not exist, upgrades its schema, and
// checks it: that it is a petstore file of a version this package knows,
// and that every statement the Store runs compiles against it. Close waits
// for the creates in flight. Path returns the file's
// absolute path, for a start-up log.
//
// # Pragmas
//
// Every connection runs with:
//
//   - journal_mode=WAL, kept in the file: readers read the last commit and
//     never wait for the writer, nor the writer for them.
//   - synchronous=FULL: every commit is flushed to the disk (fsync) before
//     Add returns, so an acknowledged pet survives a power loss, not only a
//     crash of the process. (NORMAL, common with WAL, may lose the last
//     commits on power loss.)
//   - busy_timeout of 10 seconds: a connection that finds the file locked
//     by another process waits rather than fail at once. A done context ends
//     the wait sooner.
//   - foreign_keys=ON: a key's row must name a stored pet.
//
// Writes run on one connection of their own, in BEGIN IMMEDIATE
// transactions, which take the write lock before they read: a deferred
// transaction that reads and then writes fails with SQLITE_BUSY_SNAPSHOT
// when another connection wrote in between, which is common under load. A
// lone create without a key is one INSERT, run as a transaction of its own,
// which SQLite runs the same way: it takes the write lock first.
// Get and List run on a pool of other connections, which refuse to write
// (query_only).
//
// # Schema
//
// Versions of the schema are SQL files embedded in the package, applied in
// order in one BEGIN IMMEDIATE transaction; the file's user_version records
// the last one applied (SchemaVersion) and its application_id marks it as a
// petstore file. Open refuses a file whose user_version is higher, written
// by a newer release, with an error that names the file and both versions,
// before it writes anything to it; it also refuses another application's
// database. Version 1 is:
//
//	pets     (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL,
//	          category_id INTEGER NOT NULL, status TEXT NULL CHECK (...))
//	         index (status, id)
//	pet_keys (principal TEXT, key TEXT, pet_id INTEGER REFERENCES pets,
//	          created_at INTEGER, PRIMARY KEY (principal, key)) WITHOUT ROWID
//	         index (created_at)
//
// A pet without a status has a NULL status. AUTOINCREMENT makes SQLite keep
// the largest ID ever used, so that no ID is used twice even after the pet
// with the largest one is gone. Every List is a range of the primary key,
// or of the (status, id) index under a filter, from the cursor on.
//
// # Group commit
//
// A commit costs an fsync, which is most of what a create costs. Concurrent
// calls of Add therefore share one: a call that finds no write in flight is
// written at once, alone, so that a lone caller waits for nothing but its
// own commit; calls that arrive while a write is in flight queue, and the
// next transaction takes all of them, up to 128, keyed and unkeyed alike, in
// the order they came. There is no timer: a batch is whatever queued during
// the previous one.
//
// Each call gets its own outcome. A keyed call looks its key up inside the
// transaction, so it sees every key committed before, by any process, and
// the keys of the calls before it in the same batch: it gets the pet stored
// first (replayed), or an error wrapping petstore.ErrIdempotencyKeyReused,
// and the batch goes on. Calls with one key never run at once, so Add never
// returns petstore.ErrIdempotencyKeyInUse: a second call waits for the
// first. A batch is never reported in part: when any statement or the
// commit fails, the transaction is rolled back and every call of the batch,
// replays included, gets the error. A call whose context ends while it
// queues returns at once with the context's error and stores nothing; one
// whose batch is already being written waits for the outcome of the batch
// (a few milliseconds, unless another process holds the lock), which is
// interrupted, and stores nothing, when every call of it has given up.
//
// # Two processes
//
// Any number of Stores, in one process or several, may share one file.
// SQLite lets one write transaction run at a time, and Add draws IDs inside
// its transaction, so IDs grow in commit order across every writer, and a
// client paging with a cursor never misses a pet. A writer that finds the
// file locked waits (the busy timeout); it fails with an error wrapping
// petstore.ErrUnavailable only when the lock is held for longer. Each
// process batches its own calls, so two busy processes commit in turns and
// each makes fewer creates per second than one alone. The file must be on
// a local disk: WAL needs shared memory between the processes, which
// network file systems do not give.
//
// # Idempotency keys
//
// A key is kept WithKeyRetention after the Add that stored it: by default,
// and at least, petstore.MinKeyRetention (24 hours), by the clock that
// WithClock sets. A create with a key older than that stores a new pet, as
// if the key had never been used. Keys past their retention are deleted in
// small steps inside the write transactions of Add, where they share the
// commit and never hold up a create by more than one step: at most 1,000
// keys per pass, a pass at most once a minute, or with the next batch
// while a backlog remains. PrunedKeys counts the keys forgotten since Open,
// and every pass writes a line at debug level to the WithLogger logger.
// Pets are never deleted. A store that takes no creates deletes nothing,
// and does not grow either.
//
// A key's age is measured on the wall clock, in the file, so that it holds
// across restarts and between processes: a step of the system clock ages
// every key by that step (forward, keys are forgotten early; backward, kept
// longer). Keep the clock synchronized (NTP slews rather than steps small
// errors).
//
// A key costs about 160 bytes on disk for a key of 40 characters and a
// principal of 16 (BenchmarkKeyOnDisk): the key and principal are stored
// twice, in the table and in the index on created_at, beside a pet of
// about 58 bytes. Under a steady stream of keyed creates, the table levels
// off at one retention's worth of keys: at 10 keyed creates a second, about
// 864,000 keys and 140 MB.
//
// # Errors
//
// Every error names the file. Open refuses a path that is a directory, a
// directory that does not exist, a file without write permission, a file
// that is not a SQLite database and one written by a newer version. Get of
// an unknown ID returns an error wrapping petstore.ErrNotFound. Errors
// wrapping petstore.ErrUnavailable, which the handler answers with 503, are
// those that may pass: the file stayed locked by another process past the
// busy timeout (SQLITE_BUSY, SQLITE_LOCKED), the disk or the file's size
// limit is full (SQLITE_FULL: nothing of the failed batch is stored, and
// nothing stored before is lost), and calls after Close (which also wrap
// ErrClosed). When ctx is done, a method returns with an error wrapping
// ctx.Err().
//
// # Performance
//
// Measured by BenchmarkCreate on the machine that BENCHMARKS.md describes
// (2 shared cores, a shared disk), in one run beside plain autocommit
// INSERTs of one row each into a table of the same shape, with the same
// pragmas, from as many connections as callers: with 64 concurrent callers
// Add made 85 times as many creates a second as the INSERTs in the median
// round (2,200 to 25,000 a second against 85 to 300), and 5.8 times as
// many with 8. One caller at a time, Add costs what one INSERT costs, an
// fsync: the median ratio was 1.06. Get took about 9 µs and a page of 20
// about 34 µs while 8 callers added pets. See BENCHMARKS.md for the ranges.
package sqlitestore
