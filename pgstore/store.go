package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/petstore-go/petstore"
)

// Advisory lock classes: the first key of the two-key form of PostgreSQL's
// advisory locks, so that the locks this package takes do not collide with
// an application's own. The second key identifies the table or schema.
const (
	// lockClassAdd serializes Add per table; the second key is the table's
	// OID.
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

	addSQL, addKeyedSQL, getSQL       string
	listSQL, listLimitSQL             string
	listStatusSQL, listStatusLimitSQL string
}

// New returns a Store that keeps its pets in a table reached through pool.
// The caller owns the pool: the Store never closes it, and the pool's
// configuration (size, timeouts, TLS) is the caller's choice.
//
// New does not touch the database. Call Migrate before the first use to
// create or upgrade the table. New fails only when an option is invalid.
func New(pool *pgxpool.Pool, opts ...Option) (*Store, error) {
	if pool == nil {
		return nil, errors.New("pgstore: New needs a *pgxpool.Pool; open one with pgxpool.New")
	}
	c := config{table: DefaultTable}
	for _, opt := range opts {
		opt(&c)
	}
	if err := validIdentifier("table", c.table, maxTableLength); err != nil {
		return nil, fmt.Errorf("%w; see WithTable", err)
	}
	qualify := func(name string) string { return pgx.Identifier{name}.Sanitize() }
	if c.schema != "" {
		if err := validIdentifier("schema", c.schema, maxSchemaLength); err != nil {
			return nil, fmt.Errorf("%w; see WithSchema", err)
		}
		qualify = func(name string) string { return pgx.Identifier{c.schema, name}.Sanitize() }
	}
	t := qualify(c.table)
	const columns = "id, name, category_id, coalesce(status, '')"
	return &Store{
		pool:     pool,
		schema:   c.schema,
		table:    c.table,
		relation: t,
		versions: qualify(c.table + "_migrations"),
		keys:     qualify(c.table + "_keys"),

		// The CTE takes the lock before the INSERT evaluates the identity
		// column's default, and the statement's implicit transaction holds
		// it until the row is committed and visible: see the package doc.
		addSQL: fmt.Sprintf(`WITH serial AS (SELECT pg_advisory_xact_lock(%d, $4::regclass::oid::int4))
INSERT INTO %s (name, category_id, status) SELECT $1::text, $2::bigint, nullif($3::text, '') FROM serial
RETURNING id`, lockClassAdd, t),
		// The same, with the idempotency key inserted in the same
		// statement: a key used before violates the primary key, and the
		// statement, pet included, is rolled back.
		addKeyedSQL: fmt.Sprintf(`WITH serial AS (SELECT pg_advisory_xact_lock(%d, $4::regclass::oid::int4)),
pet AS (INSERT INTO %s (name, category_id, status) SELECT $1::text, $2::bigint, nullif($3::text, '') FROM serial RETURNING id)
INSERT INTO %s (principal, key, pet_id) SELECT $5::text, $6::text, id FROM pet
RETURNING pet_id`, lockClassAdd, t, qualify(c.table+"_keys")),
		getSQL:       fmt.Sprintf(`SELECT name, category_id, coalesce(status, '') FROM %s WHERE id = $1`, t),
		listSQL:      fmt.Sprintf(`SELECT %s FROM %s WHERE id > $1 ORDER BY id`, columns, t),
		listLimitSQL: fmt.Sprintf(`SELECT %s FROM %s WHERE id > $1 ORDER BY id LIMIT $2`, columns, t),
		// With status fixed, (status, id) order is id order. Written as a
		// row comparison, the condition is a range of the (status, id)
		// index and nothing else: see the package doc.
		listStatusSQL:      fmt.Sprintf(`SELECT %s FROM %s WHERE (status, id) > ($2, $1) AND status <= $2 ORDER BY status, id`, columns, t),
		listStatusLimitSQL: fmt.Sprintf(`SELECT %s FROM %s WHERE (status, id) > ($2, $1) AND status <= $2 ORDER BY status, id LIMIT $3`, columns, t),
	}, nil
}

// Table returns the table that holds the pets, quoted and, when a schema is
// set, qualified with it, as it appears in the Store's SQL.
func (s *Store) Table() string { return s.relation }

// Add stores p under a new ID and returns it as stored. An empty Status is
// stored as NULL; a Status other than the three valid ones is refused with
// an error, before the database is asked. So is a name that contains the
// NUL character, which PostgreSQL cannot store in text (the handler refuses
// control characters, so only other callers can meet this). The pet is
// committed, and visible to every Get and List, when Add returns.
func (s *Store) Add(ctx context.Context, p petstore.NewPet, opts petstore.AddOptions) (petstore.Pet, bool, error) {
	if err := p.Validate(); err != nil { // also rejects NUL, which PostgreSQL cannot store
		return petstore.Pet{}, false, fmt.Errorf("pgstore: add pet: %w", err)
	}
	if opts.IdempotencyKey != "" {
		return s.addKeyed(ctx, p, petstore.Principal(ctx), opts.IdempotencyKey)
	}
	pet := petstore.Pet{NewPet: p}
	err := s.pool.QueryRow(ctx, s.addSQL, p.Name, p.CategoryID, string(p.Status), s.relation).Scan(&pet.ID)
	if err != nil {
		return petstore.Pet{}, false, wrapError(ctx, "add pet", err)
	}
	return pet, false, nil
}

// Get returns the pet with the given ID, or an error wrapping
// petstore.ErrNotFound.
func (s *Store) Get(ctx context.Context, id int64) (petstore.Pet, error) {
	pet := petstore.Pet{ID: id}
	var status string
	err := s.pool.QueryRow(ctx, s.getSQL, id).Scan(&pet.Name, &pet.CategoryID, &status)
	if err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return petstore.Pet{}, fmt.Errorf("pgstore: pet %d: %w", id, petstore.ErrNotFound)
		}
		return petstore.Pet{}, wrapError(ctx, fmt.Sprintf("get pet %d", id), err)
	}
	pet.Status = petstore.Status(status)
	return pet, nil
}

// List returns the pets that opts selects, ascending by ID. Every List is a
// range scan of an index, starting at opts.After: its cost depends on the
// size of the page, not on the number of pets stored or on the position of
// the page.
func (s *Store) List(ctx context.Context, opts petstore.ListOptions) ([]petstore.Pet, error) {
	var (
		rows pgx.Rows
		err  error
		size = 16
	)
	switch {
	case opts.Status == "" && opts.Limit <= 0:
		rows, err = s.pool.Query(ctx, s.listSQL, opts.After)
	case opts.Status == "":
		rows, err = s.pool.Query(ctx, s.listLimitSQL, opts.After, opts.Limit)
		size = opts.Limit
	case opts.Limit <= 0:
		rows, err = s.pool.Query(ctx, s.listStatusSQL, opts.After, string(opts.Status))
	default:
		rows, err = s.pool.Query(ctx, s.listStatusLimitSQL, opts.After, string(opts.Status), opts.Limit)
		size = opts.Limit
	}
	if err != nil {
		return nil, wrapError(ctx, "list pets", err)
	}
	defer rows.Close()
	pets := make([]petstore.Pet, 0, min(size, 128))
	for rows.Next() {
		var (
			p      petstore.Pet
			status string
		)
		if err := rows.Scan(&p.ID, &p.Name, &p.CategoryID, &status); err != nil {
			return nil, wrapError(ctx, "list pets", err)
		}
		p.Status = petstore.Status(status)
		pets = append(pets, p)
	}
	if err := rows.Err(); err != nil {
		return nil, wrapError(ctx, "list pets", err)
	}
	return pets, nil
}
