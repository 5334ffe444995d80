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
// no state of its own besides the SQL it sends, the calls of Add waiting to
// be inserted and, with WithReplicas, the health of each standby (checked
// in the background until Close), so any number of Stores, in one process
// or many, may share a table. It keeps nothing in the server session
// either: through a pooler in transaction mode, such as PgBouncer, give the
// pool default_query_exec_mode=cache_describe in its URL, so that pgx
// prepares no named statement there (docs/postgres.md says more).
//
// Migrate creates the tables (DefaultTable, "pets", unless WithTable or
// WithSchema choose another place) and upgrades them in later releases; it
// is safe to run from several instances at once, and its doc lists the
// privileges each role needs. Check verifies them and names any GRANT
// missing, so that a server can run as a role that may not change the
// schema. Beside the pets, "<table>_keys" holds the idempotency keys.
//
// IDs grow in commit order across every process that shares the table, so a
// client paging with a cursor never misses a pet, even while other instances
// add pets: inserts into one table are serialized by a transaction-scoped
// advisory lock, and reads never wait. So that this does not cap a table at
// one commit's worth of pets per WAL flush, concurrent calls of Add on one
// Store share one statement and one commit, with keys or without, up to
// WithMaxBatch. A lone call is sent at once. Each call gets its own pet and
// ID, and a batch is one transaction: it stores all its new pets or none,
// and when it fails every call of it gets the error. Every List is a range
// scan of an index, never OFFSET, so a page costs the same anywhere in a
// table of a million pets.
//
// A call whose context ends while it queues returns at once and stores
// nothing. A call cancelled while its batch is in flight asks the server to
// cancel the statement and reports what the server answers; only a
// connection that breaks while the commit is under way leaves the outcome
// unknown, as for any client of any database.
//
// An idempotency key is kept WithKeyRetention after the Add that stored it,
// by default and at least petstore.MinKeyRetention (24 hours) by the
// Store's clock (WithClock), and then forgotten. Each Store deletes expired
// keys in the background, at most one pass a minute; PrunedKeys counts
// them and WithLogger logs each pass at debug level. A key row takes about
// 224 bytes with its indexes for a 26-character key, so a million keyed
// creates a day keep about 224 MB.
//
// Get of an unknown ID returns an error wrapping petstore.ErrNotFound. An
// error that means "try again later" wraps petstore.ErrUnavailable (503): no
// connection, a broken or timed-out one, a closed pool, a server shutting
// down or starting up, a statement_timeout or lock_timeout, a serialization
// failure or deadlock, or a read-only standby. A table that holds the last
// ID there is, 2⁶³−1, fails every create, and Check, with an error that says
// so and wraps no ErrUnavailable (500): no retry helps. When the context is
// done, the query is cancelled and the error wraps ctx.Err(). Error texts
// never contain the connection string's password.
package pgstore
