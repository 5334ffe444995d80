package pgstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/internal/sqlstore"
)

// Advisory lock classes: the first key of the two-key form of PostgreSQL's
// advisory locks, so that the locks this package takes do not collide with
// an application's own. The second key identifies the table or schema.
const (
	// lockClassAdd serializes Add per table; the second key is the table's
	// OID. The first key keeps it apart from an application's own locks.
	//
	// The petstore.Store contract asks that IDs grow in the order in which
	// pets become visible: once List has shown a pet, no pet with a smaller
	// ID may appear later, or a client paging with a cursor would miss it.
	// An identity column alone does not give this: two transactions that
	// insert at once take IDs 7 and 8 and may commit in the other order, and
	// a reader between the commits sees 8 without 7. Add takes this lock,
	// transaction-scoped, before the identity column draws an ID, and
	// PostgreSQL releases it only once the commit is visible to every new
	// snapshot, so ID order is commit order across every process. Readers
	// take no lock. The alternatives are worse here: listing below a "safe"
	// watermark needs a second table updated by every insert and delays every
	// new pet for every reader; LOCK TABLE in SHARE ROW EXCLUSIVE mode also
	// waits for VACUUM and ANALYZE; SERIALIZABLE does not order commits. Rows
	// inserted bypassing Add do not take the lock and may break the order
	// while they are in flight.
	lockClassAdd int32 = 0x70657401
	// lockClassMigrate serializes Migrate per table; the second key is
	// hashtext('<schema>.<table>').
	lockClassMigrate int32 = 0x70657402
	// lockClassSchema serializes the creation of a schema; the second key is
	// hashtext('<schema>').
	lockClassSchema int32 = 0x70657403
)

// Store is a petstore.Store that keeps pets in a PostgreSQL table. It is
// safe for concurrent use, and any number of Stores, in any number of
// processes, may share one table.
type Store struct {
	pool *pgxpool.Pool

	schema   string // as configured; "" means the search_path decides
	table    string // as configured
	relation string // the table, quoted and qualified as configured
	versions string // the migrations table, quoted and qualified
	keys     string // the idempotency keys table, quoted and qualified

	// One statement per need: the LIMIT is always bound, NULL for no cap.
	addSQL, lockSQL, addKeyedSQL, addKeyedOneSQL, pruneSQL, getSQL, listSQL, listStatusSQL string
	// On a replica: the highest ID its snapshot holds, and with it the pet
	// of an ID if there is one.
	horizonSQL, getReplicaSQL string

	retention time.Duration
	now       func() time.Time
	logger    *slog.Logger

	adds  sqlstore.Queue[*addCall] // the Adds waiting to be inserted together
	prune pruner                   // the passes that forget expired keys

	replicas *replicaSet // nil without WithReplicas

	notify notifier // the listener of NotifyAdds
}

var _ petstore.Store = (*Store)(nil)

// New returns a Store that keeps its pets in a table reached through pool.
// The caller owns the pool: the Store never closes it, and the pool's
// configuration (size, timeouts, TLS) is the caller's choice.
//
// New does not touch the database. Call Migrate before the first use to
// create or upgrade the table. New fails only when an option is invalid,
// with an error that names the option to fix.
func New(pool *pgxpool.Pool, opts ...Option) (*Store, error) {
	c, err := applyOptions(opts)
	if pool == nil {
		err = errors.Join(errors.New("the pool is nil; open one with pgxpool.New"), err)
	}
	if err != nil {
		return nil, fmt.Errorf("pgstore.New: %w", err)
	}
	qualify := func(name string) string { return pgx.Identifier{name}.Sanitize() }
	if c.schema != "" {
		qualify = func(name string) string { return pgx.Identifier{c.schema, name}.Sanitize() }
	}
	t := qualify(c.table)
	channel := channelOf(t)
	const columns = "id, name, category_id, coalesce(status, '')"
	s := &Store{
		pool:     pool,
		schema:   c.schema,
		table:    c.table,
		relation: t,
		versions: qualify(c.table + "_migrations"),
		keys:     qualify(c.table + "_keys"),

		// The CTE takes the lock before the INSERT receives its first row
		// and evaluates the identity column's default, and the statement's
		// implicit transaction holds it until the rows are committed and
		// visible: see lockClassAdd. The rows are inserted, and so draw
		// their IDs, in the order of the arrays.
		// The notification of the highest ID goes out with the commit.
		addSQL: fmt.Sprintf(`WITH serial AS (SELECT pg_advisory_xact_lock(%d, $4::regclass::oid::int4)),
pet AS (
	INSERT INTO %s (name, category_id, status)
	SELECT r.name, r.category_id, nullif(r.status, '')
	FROM serial, unnest($1::text[], $2::bigint[], $3::text[]) WITH ORDINALITY AS r (name, category_id, status, n)
	ORDER BY r.n
	RETURNING id
),
woke AS (SELECT pg_notify('%s', max(id)::text) FROM pet)
SELECT id FROM pet, woke`, lockClassAdd, t, channel),
		// A batch with idempotency keys is two statements in one implicit
		// transaction, sent together: the lock, then the rows. The second
		// statement's snapshot is taken once the lock is held, so it sees
		// every key committed by an earlier Add on the table: no Add with
		// a key can be in progress while this one holds the lock.
		lockSQL: fmt.Sprintf(`SELECT pg_advisory_xact_lock(%d, $1::regclass::oid::int4)`, lockClassAdd),
		// Per row, in the order of the arrays: the pet stored under its
		// key before, if any; otherwise a new pet, and its key when it has
		// one. The new pets draw their IDs in the order of the arrays, so
		// the k-th smallest new ID belongs to the k-th new row. An empty
		// key is no key. The rows of the batch carry distinct keys. Each
		// key is looked up through the primary key, whatever the sizes
		// that the plan, cached for the statement, was made for: LATERAL
		// with LIMIT keeps the planner from joining by a scan of the whole
		// table.
		addKeyedSQL: fmt.Sprintf(`WITH input AS (
	SELECT r.n, r.name, r.category_id, nullif(r.status, '') AS status, r.principal, nullif(r.key, '') AS key
	FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[]) WITH ORDINALITY AS r (name, category_id, status, principal, key, n)
),
stored AS (
	SELECT i.n, p.id, p.name, p.category_id, coalesce(p.status, '') AS status
	FROM input i
	CROSS JOIN LATERAL (SELECT k.pet_id FROM %[2]s k WHERE k.principal = i.principal AND k.key = i.key LIMIT 1) k
	CROSS JOIN LATERAL (SELECT p.id, p.name, p.category_id, p.status FROM %[1]s p WHERE p.id = k.pet_id LIMIT 1) p
	WHERE i.key IS NOT NULL
),
fresh AS (
	SELECT i.*, row_number() OVER (ORDER BY i.n) AS k
	FROM input i WHERE NOT EXISTS (SELECT FROM stored s WHERE s.n = i.n)
),
pet AS (
	INSERT INTO %[1]s (name, category_id, status)
	SELECT f.name, f.category_id, f.status FROM fresh f ORDER BY f.n
	RETURNING id
),
added AS (
	SELECT f.n, f.principal, f.key, p.id
	FROM (SELECT id, row_number() OVER (ORDER BY id) AS k FROM pet) p JOIN fresh f ON f.k = p.k
),
key AS (
	INSERT INTO %[2]s (principal, key, pet_id, created_at)
	SELECT a.principal, a.key, a.id, $6::timestamptz FROM added a WHERE a.key IS NOT NULL
),
woke AS (SELECT CASE WHEN count(*) > 0 THEN pg_notify('%[3]s', max(id)::text) END FROM pet)
SELECT i.n, coalesce(a.id, s.id), s.id IS NOT NULL, coalesce(s.name, ''), coalesce(s.category_id, 0), coalesce(s.status, '')
FROM input i CROSS JOIN woke LEFT JOIN added a ON a.n = i.n LEFT JOIN stored s ON s.n = i.n
ORDER BY i.n`, t, qualify(c.table+"_keys"), channel),
		// addKeyedSQL for one row, given as scalars: the same outcome
		// with a plan a fraction of the size, for a lone caller.
		addKeyedOneSQL: fmt.Sprintf(`WITH stored AS (
	SELECT p.id, p.name, p.category_id, coalesce(p.status, '') AS status
	FROM %[2]s k JOIN %[1]s p ON p.id = k.pet_id
	WHERE k.principal = $4::text AND k.key = $5::text
),
pet AS (
	INSERT INTO %[1]s (name, category_id, status)
	SELECT $1::text, $2::bigint, nullif($3::text, '') WHERE NOT EXISTS (SELECT FROM stored)
	RETURNING id
),
key AS (
	INSERT INTO %[2]s (principal, key, pet_id, created_at)
	SELECT $4::text, $5::text, id, $6::timestamptz FROM pet
),
woke AS (SELECT pg_notify('%[3]s', id::text) FROM pet)
SELECT 1::bigint, id, false, '', 0::bigint, '' FROM pet, woke
UNION ALL
SELECT 1::bigint, id, true, name, category_id, status FROM stored`, t, qualify(c.table+"_keys"), channel),
		// The oldest expired keys, a few at a time. Without FOR UPDATE,
		// which would need the UPDATE privilege that a serving role does
		// not hold: a row that another pass deletes meanwhile is waited
		// for and then skipped, as a deleted row is.
		pruneSQL: fmt.Sprintf(`DELETE FROM %[1]s WHERE ctid = ANY (ARRAY(
	SELECT ctid FROM %[1]s WHERE created_at < $1 ORDER BY created_at LIMIT $2)) AND created_at < $1`, qualify(c.table+"_keys")),
		getSQL:  fmt.Sprintf(`SELECT name, category_id, coalesce(status, '') FROM %s WHERE id = $1`, t),
		listSQL: fmt.Sprintf(`SELECT %s FROM %s WHERE id > $1 ORDER BY id LIMIT $2`, columns, t),
		// With status fixed, (status, id) order is id order. Written as a
		// row comparison, the condition is a range of the (status, id)
		// index and nothing else. Written the simpler way, "status = $3 AND
		// id > $1 ORDER BY id", it leaves the planner a choice: for a common
		// status it may walk the primary key and skip the pets with another
		// status, which reads the whole rest of the table when no pet after
		// the cursor has that status (and a prepared statement's generic
		// plan may make that choice for every status). Merging the filtered
		// and unfiltered cases into one statement (an OR, or a UNION ALL with
		// one-time filters) loses the index range in a generic plan or relies
		// on an order of branches that SQL does not promise. A test checks
		// the plans with EXPLAIN.
		listStatusSQL: fmt.Sprintf(`SELECT %s FROM %s WHERE (status, id) > ($3, $1) AND status <= $3 ORDER BY status, id LIMIT $2`, columns, t),
		// IDs are in commit order (see the package doc), so a snapshot
		// that holds the pet with the highest ID holds every pet below it:
		// a pet below it that the snapshot lacks does not exist.
		horizonSQL: fmt.Sprintf(`SELECT coalesce(max(id), 0) FROM %s`, t),
		getReplicaSQL: fmt.Sprintf(`SELECT h.id, p.id IS NOT NULL, coalesce(p.name, ''), coalesce(p.category_id, 0), coalesce(p.status, '')
FROM (SELECT coalesce(max(id), 0) AS id FROM %[1]s) h LEFT JOIN %[1]s p ON p.id = $1`, t),

		retention: c.KeyRetention,
		now:       c.Now,
		logger:    c.Logger,

		notify: notifier{config: c.listen},
	}
	s.adds.Max, s.adds.Write = c.maxBatch, s.insert
	if len(c.replicas) > 0 {
		s.replicas = newReplicaSet(pool, c)
	}
	return s, nil
}

// Table returns the table that holds the pets, quoted and, when a schema is
// set, qualified with it, as it appears in the Store's SQL.
func (s *Store) Table() string { return s.relation }

// Get returns the pet with the given ID, or an error wrapping
// petstore.ErrNotFound. With WithReplicas, a replica answers when it can;
// a pet it lacks is looked for on the primary unless the replica holds a
// pet with a higher ID, which proves it absent (see WithReplicas).
func (s *Store) Get(ctx context.Context, id int64) (petstore.Pet, error) {
	pet := petstore.Pet{ID: id}
	if s.replicas != nil {
		found := false
		ok, err := s.replicas.read(ctx, func(ctx context.Context, pool *pgxpool.Pool, own int64) (replicaOutcome, error) {
			var horizon int64
			err := pool.QueryRow(ctx, s.getReplicaSQL, id).Scan(&horizon, &found, &pet.Name, &pet.CategoryID, (*statusScanner)(&pet.Status))
			switch {
			case err != nil:
				return unsure, err
			case found || id <= horizon:
				return answered, nil
			case id <= own:
				return behind, nil
			}
			return unsure, nil
		})
		switch {
		case err != nil:
			return petstore.Pet{}, wrapError(ctx, fmt.Sprintf("get pet %d", id), err)
		case ok && found:
			return pet, nil
		case ok:
			return petstore.Pet{}, fmt.Errorf("pgstore: pet %d: %w", id, petstore.ErrNotFound)
		}
	}
	err := s.pool.QueryRow(ctx, s.getSQL, id).Scan(&pet.Name, &pet.CategoryID, (*statusScanner)(&pet.Status))
	if err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return petstore.Pet{}, fmt.Errorf("pgstore: pet %d: %w", id, petstore.ErrNotFound)
		}
		return petstore.Pet{}, wrapError(ctx, fmt.Sprintf("get pet %d", id), err)
	}
	return pet, nil
}

// List returns the pets that opts selects, ascending by ID. Every List is a
// range scan of an index, starting at opts.After: its cost depends on the
// size of the page, not on the number of pets stored or on the position of
// the page.
func (s *Store) List(ctx context.Context, opts petstore.ListOptions) ([]petstore.Pet, error) {
	size := 16
	if opts.Limit > 0 {
		size = min(opts.Limit, 128)
	}
	return s.appendList(ctx, make([]petstore.Pet, 0, size), opts)
}

// appendList appends to dst the pets that List returns for opts and returns
// the extended slice. On error it returns dst as it was given, and an error.
func (s *Store) appendList(ctx context.Context, dst []petstore.Pet, opts petstore.ListOptions) ([]petstore.Pet, error) {
	// The LIMIT is bound like the other arguments, to NULL for no cap, so
	// that each form of the query is one prepared statement whatever the
	// options.
	var limit any // NULL: no cap
	if opts.Limit > 0 {
		limit = opts.Limit
	}
	query, args := s.listSQL, []any{opts.After, limit}
	if opts.Status != "" {
		query, args = s.listStatusSQL, append(args, string(opts.Status))
	}
	if s.replicas != nil {
		// The replica's highest ID, then the page, in one round trip: the
		// page's snapshot is taken after the first statement's, so it holds
		// at least the pets that the first saw.
		var page []petstore.Pet
		ok, err := s.replicas.read(ctx, func(ctx context.Context, pool *pgxpool.Pool, own int64) (replicaOutcome, error) {
			b := &pgx.Batch{}
			b.Queue(s.horizonSQL)
			b.Queue(query, args...)
			results := pool.SendBatch(ctx, b)
			defer results.Close()
			var horizon int64
			if err := results.QueryRow().Scan(&horizon); err != nil {
				return unsure, err
			}
			if horizon < own {
				return behind, nil
			}
			rows, err := results.Query()
			page, err = scanPets(dst, rows, err)
			if err == nil {
				err = results.Close()
			}
			return answered, err
		})
		switch {
		case err != nil:
			return dst, wrapError(ctx, "list pets", err)
		case ok:
			return page, nil
		}
	}
	rows, err := s.pool.Query(ctx, query, args...)
	page, err := scanPets(dst, rows, err)
	if err != nil {
		return dst, wrapError(ctx, "list pets", err)
	}
	return page, nil
}

// scanPets appends to dst the pets of the rows that a list query returned,
// or, on error, returns dst as it was given and the error.
func scanPets(dst []petstore.Pet, rows pgx.Rows, err error) ([]petstore.Pet, error) {
	if err != nil {
		return dst, err
	}
	defer rows.Close()
	// The destinations are built once and reused for every row; the status
	// is matched against the valid ones in the driver's buffer, so a row
	// costs one allocation: its name.
	var p petstore.Pet
	dest := [...]any{&p.ID, &p.Name, &p.CategoryID, (*statusScanner)(&p.Status)}
	n := len(dst)
	for rows.Next() {
		if err := rows.Scan(dest[:]...); err != nil {
			return dst[:n], err
		}
		dst = append(dst, p)
	}
	if err := rows.Err(); err != nil {
		return dst[:n], err
	}
	return dst, nil
}

// statusScanner scans a status column into a petstore.Status without
// copying the bytes of the three valid statuses.
type statusScanner petstore.Status

// ScanBytes sets s from the column's text, which is valid only during the
// call.
func (s *statusScanner) ScanBytes(b []byte) error {
	switch string(b) { // compared without allocating
	case "":
		*s = ""
	case string(petstore.StatusAvailable):
		*s = statusScanner(petstore.StatusAvailable)
	case string(petstore.StatusPending):
		*s = statusScanner(petstore.StatusPending)
	case string(petstore.StatusSold):
		*s = statusScanner(petstore.StatusSold)
	default:
		*s = statusScanner(b) // the table's CHECK forbids this, but keep what is stored
	}
	return nil
}
