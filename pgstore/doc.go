// Package pgstore is a petstore.Store that keeps pets in PostgreSQL, so that
// several instances of a service, behind a load balancer, serve one
// catalogue.
//
//	pool, err := pgxpool.New(ctx, os.Getenv("DATABASE_URL"))
//	...
//	store, err := pgstore.New(pool)
//	...
//	if err := store.Migrate(ctx); err != nil {
//		...
//	}
//	api, err := petstore.New(petstore.WithStore(store), ...)
//
// The caller owns the pool. A Store keeps no state in the server session,
// so any number of Stores, in one process or many, may share a table.
// Through a pooler in transaction mode, such as PgBouncer, give the pool
// default_query_exec_mode=cache_describe in its URL (docs/postgres.md).
//
// Migrate creates the tables (DefaultTable, "pets", unless WithTable or
// WithSchema choose another place) and upgrades them in later releases,
// safely from several instances at once; its doc lists the privileges each
// role needs. Check verifies them and names any GRANT missing, so that a
// server can run as a role that may not change the schema.
//
// IDs grow in commit order across every process that shares the table, so
// a client paging with a cursor never misses a pet, and reads never wait.
// Concurrent calls of Add on one Store share one statement and one commit,
// with keys or without, up to WithMaxBatch; a lone call is sent at once. A
// batch stores all its new pets or none, and when it fails every call of it
// gets the error. Every List is a range scan of an index, never OFFSET, so
// a page costs the same anywhere in a table of a million pets.
//
// A call whose context ends while it queues returns at once and stores
// nothing. A call cancelled while its batch is in flight asks the server to
// cancel the statement and reports what the server answers; only a
// connection that breaks while the commit is under way leaves the outcome
// unknown, as for any client of any database.
//
// An idempotency key is kept WithKeyRetention after the Add that stored it
// (at least petstore.MinKeyRetention, 24 hours, by the Store's clock,
// WithClock), then forgotten: each Store deletes expired keys in the
// background, at most one pass a minute, counted by PrunedKeys and logged
// at debug level by WithLogger. A key row takes about 224 bytes with its
// indexes, so a million keyed creates a day keep about 224 MB.
//
// Errors: Get of an unknown ID wraps petstore.ErrNotFound. "Try again
// later" wraps petstore.ErrUnavailable (503): no connection, a broken or
// timed-out one, a closed pool, a server shutting down or starting up, a
// statement_timeout or lock_timeout, a serialization failure or deadlock,
// or a read-only standby. A table that holds the last ID there is, 2⁶³−1,
// fails every create, and Check, with an error that wraps no
// ErrUnavailable (500): no retry helps. When the context is done, the query
// is cancelled and the error wraps ctx.Err(). Error texts never contain the
// connection string's password.
package pgstore
