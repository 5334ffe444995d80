// Package pgstore is a petstore.Store that keeps pets in PostgreSQL, so that
// several instances of a service, behind a load balancer, serve one
// catalogue.
//
// Typical use is:
//
//	pool, err := pgxpool.New(ctx, os.Getenv("DATABASE_URL"))
//	...
//	defer pool.Close()
//	store, err := pgstore.New(pool)
//	...
//	if err := store.Migrate(ctx); err != nil {
//		...
//	}
//	api, err := petstore.New(petstore.WithStore(store), ...)
//
// The caller owns the pool and decides its size and timeouts. A Store holds
// no state of its own besides the SQL it sends and the calls of Add waiting
// to be inserted, so any number of Stores, in one process or many, may share
// a table.
//
// # Schema
//
// Migrate creates the table (DefaultTable, "pets", unless WithTable or
// WithSchema choose another place) and upgrades it in later releases; see
// Migrate for what it does and how concurrent calls are made safe. The table
// is:
//
//	id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY
//	name        text   NOT NULL
//	category_id bigint NOT NULL
//	status      text   NULL CHECK (status IN ('available', 'pending', 'sold'))
//
// with an index on (status, id). A pet without a status has a NULL status.
// Beside it, "<table>_keys" holds the idempotency keys (see Idempotency
// keys below).
//
// Every List is a keyset range scan of an index, never OFFSET, so that a page
// costs the same at the start of a table of a million pets as at its end.
// Without a status filter it reads the primary key from $after on:
//
//	SELECT ... WHERE id > $after ORDER BY id LIMIT $n
//
// With a filter it reads the (status, id) index from ($status, $after) on:
//
//	SELECT ... WHERE (status, id) > ($status, $after) AND status <= $status
//	ORDER BY status, id LIMIT $n
//
// which selects the same rows in the same order as "status = $status AND
// id > $after ORDER BY id". Written that simpler way, the query leaves the
// planner a choice: when the status is common it may walk the primary key
// and skip the pets with another status, which is cheap on average but
// reads the whole rest of the table when no pet after the cursor has that
// status (and a prepared statement's generic plan may make that choice for
// every status). The row comparison can be served only by the (status, id)
// index, which reads the page's rows and no others. A test checks these
// plans with EXPLAIN.
//
// The LIMIT is bound like the other arguments, to NULL when
// ListOptions.Limit is 0, so that each of the two is one prepared statement
// whatever the options. The status is not merged into one statement with
// the unfiltered case: the forms that would do it (an OR of both
// conditions, or a UNION ALL of both queries with one-time filters) either
// lose the index range in a generic plan or rely on the order in which
// PostgreSQL appends the branches, which SQL does not promise.
//
// # IDs in commit order
//
// The petstore.Store contract asks that IDs grow in the order in which pets
// become visible: once List has shown a pet, no pet with a smaller ID may
// appear later, or a client paging with a cursor would miss it. An identity
// column alone does not give this. Two transactions that insert at the same
// time take IDs 7 and 8 in one order and may commit in the other: a reader
// between the two commits sees 8 without 7, moves its cursor past 8, and
// never sees 7.
//
// Add therefore serializes inserts into a table with a transaction-scoped
// advisory lock, keyed by the table's OID (the two-key form, with the first
// key 0x70657401 so that it does not collide with an application's own
// locks). Without idempotency keys, Add is one statement, run in its own
// implicit transaction:
//
//	WITH serial AS (SELECT pg_advisory_xact_lock(0x70657401, $table::regclass::oid::int4))
//	INSERT INTO pets (name, category_id, status)
//	SELECT r.name, r.category_id, nullif(r.status, '')
//	FROM serial, unnest($names, $categories, $statuses) WITH ORDINALITY AS r (name, category_id, status, n)
//	ORDER BY r.n RETURNING id
//
// The lock is taken before the identity column draws the next ID, and
// PostgreSQL releases a transaction's locks only after its commit is visible
// to every new snapshot. So the next insert draws its IDs only once the
// previous pets can be seen, and ID order is commit order, across every
// process that shares the database. Readers take no lock and never wait for
// writers; inserts into different tables do not wait for each other.
//
// # Concurrent Adds share a commit
//
// The lock means that inserts into one table do not overlap, so a table
// takes one commit, one WAL flush, at a time, however many instances write
// to it. Concurrent calls of Add on one Store therefore share a commit,
// with keys or without: a call that finds no batch of its Store on its way
// to the lock is sent at once, alone, so that a lone caller waits for
// nothing but its own insert; calls that arrive meanwhile queue, and the
// next statement inserts all of them, up to WithMaxBatch (64 by default),
// in the order they came. There is no timer. Each call gets its own pet and
// ID. The rows of a statement draw their IDs in the order of the arrays,
// and are committed, and become visible, together.
//
// The next batch is sent while the one before commits, when that pays: as
// soon as a batch's statement has its rows (it holds the lock, and only its
// commit is left), the calls queued meanwhile are sent, to wait at the lock
// and run the moment the commit releases it, if there are more of them
// than the batch holds or a full batch. Otherwise they wait for the commit,
// and go together with the callers it releases who call again: sending
// them at once would make every commit carry only part of the callers (with
// 8 callers, batches alternated between 1 and 7 pets when one batch was
// sent at a time, and would alternate between halves if every batch were
// sent at once), since the commits of a table are serialized by its lock
// and the pets per commit decide the creates per second. The next batch is
// sent only once the one before has drawn its IDs, so the IDs of one
// Store's calls are in the order the calls came, batch after batch.
//
// A call is never reported in part: a batch is one transaction, so it
// stores every new pet and key or none, and when it fails every call of
// the batch gets the error. A call whose context ends while it queues
// leaves at once with the context's error and stores nothing. A batch runs
// under the earliest deadline of its calls (in a server, every call has the
// same request timeout), and is cancelled when every call of it has given
// up; a call cancelled while its batch is in flight waits for the batch's
// outcome, which the server decides: Add asks the server to cancel the
// statement, rather than abandon the connection as pgx does by default (the
// server would then go on waiting for the lock, and store pets whose
// callers were told that they failed), and reports what the server
// answers. Only a connection that breaks while the commit is under way
// leaves the outcome unknown, as for any client of any database.
//
// Measured by BenchmarkAdd on the machine that BENCHMARKS.md describes (2
// shared cores, PostgreSQL 15 on the same host, a pool of 16 connections),
// in one run, as multiples of plain autocommit INSERTs of one row each on
// the same pool: BENCHMARKS.md lists the figures. One caller at a time, Add
// costs what one INSERT costs, a round trip and a flush.
//
// The alternatives are worse for this store. Listing only below a "safe"
// watermark (the smallest ID still in flight) needs a second table updated
// by every insert and delays every new pet for every reader. LOCK TABLE in
// SHARE ROW EXCLUSIVE mode serializes inserts too, but also waits for
// VACUUM and ANALYZE. SERIALIZABLE isolation does not order commits.
//
// Rows inserted by other means, bypassing Add, do not take the lock and may
// break the order while such inserts are in flight.
//
// # Idempotency keys
//
// A key is a row of "<table>_keys": the principal, the key, the ID of the
// pet stored with it, and the time it was stored by the Store's clock
// (WithClock), with the primary key (principal, key) and an index on the
// time, and no foreign key (see Migrate). A batch in which any call has a key is two statements sent
// together in one implicit transaction: the table's lock, then one
// statement that, for each row, looks up its key, inserts the pets of the
// rows whose key is not stored (or that have none), and inserts their
// keys. Its snapshot is taken once the lock is held, so it sees every key
// that an earlier Add, in any process, committed, and no Add with a key
// can be in progress meanwhile: a second Add with a key waits at the lock
// for the first and then finds its key, so ErrIdempotencyKeyInUse never
// occurs. Within a batch, a key is sent once, with the first call that has
// it; the later calls with it get the first's pet, replayed, or
// ErrIdempotencyKeyReused, as if they came after it. A key already stored
// answers only its own call: the batch's other pets are stored.
// (PostgreSQL's default isolation, READ COMMITTED, gives the second
// statement its own snapshot; under a role whose default is REPEATABLE
// READ or stricter, a key committed while a batch waits at the lock fails
// that batch with a unique violation instead.)
//
// A key lives for its retention, WithKeyRetention, 24 hours
// (petstore.MinKeyRetention) unless set longer, after the Add that stored
// it, and is then forgotten: a later Add with it stores a new pet. A key
// past its retention that has not yet been pruned is still answered. The
// adder starts a pass of pruning between batches, in a goroutine of its
// own, at most once a minute by the Store's clock and never two at once:
// it deletes the keys stored before the clock's time less the retention,
// the oldest first, at most 1,000 in each statement, statement after
// statement until fewer are left, so that no statement holds many row
// locks or runs long, and creates never wait for it. Every Store prunes
// its table, skipping the rows another Store is deleting. PrunedKeys counts
// the keys a Store deleted, and WithLogger receives a line at debug level
// for each pass. Under a steady stream of new keys, the table holds the
// keys of one retention and levels off.
//
// A key row takes about 224 bytes with its indexes for a key of 26
// characters (the Go client's) and a principal of 16, and about 1,000
// bytes for a key of 255 characters, the longest the handler accepts,
// measured with pg_total_relation_size over 100,000 rows: a million keyed
// creates a day keep about 224 MB of keys.
//
// # Errors
//
// Get of an unknown ID returns an error wrapping petstore.ErrNotFound. An
// error that means "try again later" wraps petstore.ErrUnavailable, so the
// API answers 503 rather than 500: no connection could be opened, the
// connection broke or timed out, the pool is closed, the server is shutting
// down or starting up (SQLSTATE class 08, 53, 57P01 to 57P03), a
// statement_timeout or lock_timeout fired, a serialization failure or
// deadlock, or the server is a read-only standby. When the context is done,
// the query is cancelled and the error wraps ctx.Err(). Error texts come from
// pgx and the server and never contain the connection string's password.
package pgstore
