package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/petstore-go/petstore"
)

// addKeyed adds p under an idempotency key: the pet and the key in one
// statement, so that both are committed or neither. When the key was used
// before, the statement fails on the key's primary key and stores nothing,
// and the pet stored first is replayed, or the key reported reused.
//
// Another process adding with the same key at the same time holds the
// table's advisory lock until it commits, so this statement meets its key
// committed, never in progress.
func (s *Store) addKeyed(ctx context.Context, p petstore.NewPet, principal, key string) (petstore.Pet, bool, error) {
	pet := petstore.Pet{NewPet: p}
	err := s.cancellable(ctx, func(qctx context.Context, conn *pgxpool.Conn) error {
		return conn.QueryRow(qctx, s.addKeyedSQL, p.Name, p.CategoryID, string(p.Status), s.relation, principal, key).Scan(&pet.ID)
	})
	var pgErr *pgconn.PgError
	switch {
	case err == nil:
		return pet, false, nil
	case !errors.As(err, &pgErr) || pgErr.Code != "23505": // unique_violation
		return petstore.Pet{}, false, wrapError(ctx, "add pet", err)
	}
	var stored petstore.Pet
	var status string
	err = s.pool.QueryRow(ctx, `SELECT p.id, p.name, p.category_id, coalesce(p.status, '') FROM `+s.keys+` k
JOIN `+s.relation+` p ON p.id = k.pet_id WHERE k.principal = $1 AND k.key = $2`, principal, key).
		Scan(&stored.ID, &stored.Name, &stored.CategoryID, &status)
	if err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			err = fmt.Errorf("the key violated its primary key but is not in %s", s.keys)
		}
		return petstore.Pet{}, false, wrapError(ctx, "add pet: look up its idempotency key", err)
	}
	stored.Status = petstore.Status(status)
	if stored.NewPet != p {
		return petstore.Pet{}, false, fmt.Errorf("pgstore: add pet: %w", petstore.ErrIdempotencyKeyReused)
	}
	return stored, true, nil
}
