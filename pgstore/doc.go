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
// no state of its own besides the SQL it sends, so any number of Stores, in
// one process or many, may share a table.
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
// locks). Add is one statement, run in its own implicit transaction:
//
//	WITH serial AS (SELECT pg_advisory_xact_lock(0x70657401, $table::regclass::oid::int4))
//	INSERT INTO pets (name, category_id, status) SELECT $1, $2, $3 FROM serial RETURNING id
//
// The lock is taken before the identity column draws the next ID, and
// PostgreSQL releases a transaction's locks only after its commit is visible
// to every new snapshot. So the next Add draws its ID only once the previous
// pet can be seen, and ID order is commit order, across every process that
// shares the database. The lock is held for one INSERT and its commit, and
// costs no extra round trip: one Add at a time costs what a plain INSERT
// does, dominated by the commit's WAL flush. What it costs is that inserts
// into one table do not overlap. Without the lock, concurrent commits share
// WAL flushes (group commit); with it, a table takes at most one commit per
// flush, so on a disk that flushes in 2 ms a table takes about 500 pets a
// second however many instances write to it. BenchmarkAdd measures Add
// serially and from many goroutines, beside the same INSERT without the
// lock and a SELECT 1 round trip. Readers take no lock and never wait for
// writers; inserts into different tables do not wait for each other.
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
