package pgstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/internal/options"
	"github.com/petstore-go/petstore/internal/sqlstore"
	"github.com/petstore-go/petstore/internal/wake"
)

// Advisory lock classes: the first key of the two-key form of PostgreSQL's
// advisory locks, so that this package's locks do not collide with an
// application's own.
const (
	// lockClassAdd serializes Add per table (the second key is its OID),
	// so that IDs grow in commit order, as the petstore.Store contract asks:
	// with an identity column alone, two inserts may take IDs 7 and 8 and
	// commit in the other order, and a reader between the commits sees 8
	// without 7. Add takes it, transaction-scoped, before the identity
	// column draws an ID, and PostgreSQL releases it once the commit is
	// visible; readers take no lock. (A "safe" watermark would delay every
	// new pet for every reader; LOCK TABLE also waits for VACUUM;
	// SERIALIZABLE does not order commits.) Rows inserted bypassing Add may
	// break the order while in flight.
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

	schema, table string // as configured; schema "" means the search_path decides
	// The tables of pets, versions and keys, quoted and qualified.
	relation, versions, keys string

	addSQL, lockSQL, addKeyedSQL, addKeyedOneSQL, pruneSQL, getSQL, listSQL, listStatusSQL string
	// On a replica: the highest ID its snapshot holds, and with it a pet.
	horizonSQL, getReplicaSQL string

	opt sqlstore.Options // WithKeyRetention, WithClock, WithLogger

	adds     sqlstore.Queue[*addCall] // the Adds waiting to be inserted together
	prune    pruner                   // the passes that forget expired keys
	replicas *replicaSet              // nil without WithReplicas
	// NotifyAdds: the listener's configuration, and the watchers.
	listenConfig *pgx.ConnConfig
	wakes        wake.Set
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
	c := config{table: DefaultTable, maxBatch: DefaultMaxBatch, Options: sqlstore.DefaultOptions(),
		replicaWait: DefaultReplicaWait, replicaMaxLag: DefaultReplicaMaxLag}
	err := options.Apply(&c, opts, Option.apply)
	if pool == nil {
		err = errors.Join(errors.New("the pool is nil; open one with pgxpool.New"), err)
	}
	if err != nil {
		return nil, fmt.Errorf("pgstore.New: %w", err)
	}
	qualify := func(suffix string) string { return identifier(c.schema, c.table+suffix).Sanitize() }
	t, keys := qualify(""), qualify("_keys")
	channel := channelOf(t)
	const columns = "id, name, category_id, coalesce(status, '')"
	s := &Store{
		pool:     pool,
		schema:   c.schema,
		table:    c.table,
		relation: t,
		versions: qualify("_migrations"),
		keys:     keys,

		// The CTE takes the lock (see lockClassAdd) before the INSERT draws
		// an ID; the rows draw theirs in the order of the arrays; the
		// notification of the highest ID goes out with the commit.
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
		// A keyed batch sends the lock, then the rows (see insertKeyed).
		lockSQL: fmt.Sprintf(`SELECT pg_advisory_xact_lock(%d, $1::regclass::oid::int4)`, lockClassAdd),
		// Per row: the pet stored under its (distinct, "" for none) key
		// before, or else a new pet and its key; the k-th smallest new ID
		// belongs to the k-th new row. LATERAL with LIMIT keeps a cached
		// plan looking each key up by the primary key, never by a scan.
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
ORDER BY i.n`, t, keys, channel),
		// addKeyedSQL for a lone caller, with a fraction of the plan.
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
SELECT 1::bigint, id, true, name, category_id, status FROM stored`, t, keys, channel),
		// The oldest expired keys, a few at a time; without FOR UPDATE,
		// which needs UPDATE: a row that another pass deletes is skipped.
		pruneSQL: fmt.Sprintf(`DELETE FROM %[1]s WHERE ctid = ANY (ARRAY(
	SELECT ctid FROM %[1]s WHERE created_at < $1 ORDER BY created_at LIMIT $2)) AND created_at < $1`, keys),
		getSQL:  fmt.Sprintf(`SELECT name, category_id, coalesce(status, '') FROM %s WHERE id = $1`, t),
		listSQL: fmt.Sprintf(`SELECT %s FROM %s WHERE id > $1 ORDER BY id LIMIT $2`, columns, t),
		// A row comparison makes the condition a range of the (status, id)
		// index and nothing else: "status = $3 AND id > $1" lets a (generic)
		// plan walk the primary key, skipping other statuses, to the end of
		// the table. TestListIsIndexRangeScan checks the plans.
		listStatusSQL: fmt.Sprintf(`SELECT %s FROM %s WHERE (status, id) > ($3, $1) AND status <= $3 ORDER BY status, id LIMIT $2`, columns, t),
		// IDs are in commit order, so a snapshot lacks no pet below its
		// highest ID that exists.
		horizonSQL: fmt.Sprintf(`SELECT coalesce(max(id), 0) FROM %s`, t),
		getReplicaSQL: fmt.Sprintf(`SELECT h.id, p.id IS NOT NULL, coalesce(p.name, ''), coalesce(p.category_id, 0), coalesce(p.status, '')
FROM (SELECT coalesce(max(id), 0) AS id FROM %[1]s) h LEFT JOIN %[1]s p ON p.id = $1`, t),

		opt: c.Options,

		listenConfig: cmp.Or(c.listen, pool.Config().ConnConfig),
	}
	s.adds.Max, s.adds.Write = c.maxBatch, s.insert
	if len(c.replicas) > 0 {
		s.replicas = newReplicaSet(pool, c)
	}
	return s, nil
}

// identifier names the table name in schema, or, when schema is "", where
// the search_path finds it.
func identifier(schema, name string) pgx.Identifier {
	if schema == "" {
		return pgx.Identifier{name}
	}
	return pgx.Identifier{schema, name}
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
	var found bool
	ok, err := s.replicas.read(ctx, func(ctx context.Context, pool *pgxpool.Pool, own int64) (replicaOutcome, error) {
		var horizon int64
		err := pool.QueryRow(ctx, s.getReplicaSQL, id).Scan(&horizon, &found, &pet.Name, &pet.CategoryID, &pet.Status)
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
	if err == nil && !ok {
		err = s.pool.QueryRow(ctx, s.getSQL, id).Scan(&pet.Name, &pet.CategoryID, &pet.Status)
		if found = err == nil; errors.Is(err, pgx.ErrNoRows) {
			err = nil
		}
	}
	switch {
	case err != nil:
		return petstore.Pet{}, wrapError(ctx, fmt.Sprintf("get pet %d", id), err)
	case !found:
		return petstore.Pet{}, fmt.Errorf("pgstore: pet %d: %w", id, petstore.ErrNotFound)
	}
	return pet, nil
}

// List returns the pets that opts selects, ascending by ID. Every List is a
// range scan of an index, starting at opts.After: its cost depends on the
// size of the page, not on the number of pets stored or on the position of
// the page.
func (s *Store) List(ctx context.Context, opts petstore.ListOptions) ([]petstore.Pet, error) {
	// The LIMIT is bound like the other arguments, to NULL for no cap, so
	// that each form of the query is one prepared statement.
	var limit any
	if opts.Limit > 0 {
		limit = opts.Limit
	}
	query, args := s.listSQL, []any{opts.After, limit}
	if opts.Status != "" {
		query, args = s.listStatusSQL, append(args, string(opts.Status))
	}
	var page []petstore.Pet
	// The replica's highest ID, then the page, in one round trip: the
	// page's snapshot is taken after the first statement's, so it holds at
	// least the pets that the first saw.
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
		rows, _ := results.Query() // the error comes back from CollectRows
		var err error
		if page, err = pgx.CollectRows(rows, pgx.RowToStructByPos[petstore.Pet]); err == nil {
			err = results.Close()
		}
		return answered, err
	})
	if err == nil && !ok {
		rows, _ := s.pool.Query(ctx, query, args...) // the error comes back from CollectRows
		page, err = pgx.CollectRows(rows, pgx.RowToStructByPos[petstore.Pet])
	}
	if err != nil {
		return nil, wrapError(ctx, "list pets", err)
	}
	return page, nil
}
