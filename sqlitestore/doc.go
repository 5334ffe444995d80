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
// and that every statement the Store runs compiles against it.
//
// A pet is on disk (synchronous=FULL) before Add returns, so neither a crash
// nor a power cut loses an acknowledged pet. The file is written in WAL
// mode: while a Store has it open, its -wal and -shm files lie beside it, and
// a backup takes all three, or SQLite's .backup command. Reads never wait
// for the writer. Concurrent calls of Add share one transaction and one
// commit, so many callers make many times the creates per second of one
// INSERT each (BENCHMARKS.md has the figures), while a lone caller pays one
// commit.
//
// Any number of Stores, in one process or several, may share one file. IDs
// grow in commit order across every writer, so a client paging with a cursor
// never misses a pet; two busy processes take turns to write. The file must
// be on a local disk: WAL needs memory shared between the processes, which
// network file systems do not give.
//
// An idempotency key is kept WithKeyRetention after the Add that stored it,
// by default and at least petstore.MinKeyRetention (24 hours) by the clock
// that WithClock sets, and then forgotten: a create with it afterwards
// stores a new pet. Keys are deleted in small steps inside the writes of
// Add; PrunedKeys counts them and WithLogger logs each pass at debug level.
// A key's age is kept in the file, on the wall clock, so keep the system
// clock synchronized. A key of 40 characters costs about 160 bytes on disk;
// at 10 keyed creates a second the keys level off at about 140 MB.
//
// Backup copies the file while Stores go on writing it, ScheduleBackups does
// so every interval into a directory and keeps the newest, and Restore
// puts a backup in place of a file that no Store holds.
//
// Errors name the file. Open refuses a directory, a directory that does not
// exist, a file it cannot write, a file that is not a SQLite database or
// not a petstore one, one written by a newer release, and one whose schema
// holds an object the migrations do not make (ErrSchema). Get of an unknown
// ID returns an error wrapping petstore.ErrNotFound. An error that may pass
// wraps petstore.ErrUnavailable (503): the file stayed locked by another
// process past the busy timeout, the disk is full (nothing of the failed
// batch is stored), or the Store is closed. A file that has issued the last
// ID there is, 2⁶³−1, fails every create, and Check, with an error that says
// so and wraps no ErrUnavailable (500): no retry helps. When ctx is done, a
// method returns an error wrapping ctx.Err().
package sqlitestore
