package sqlitestore

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/internal/sqlstore"
	sqlite3 "modernc.org/sqlite/lib"
)

// maxBatch is the most calls of Add that one write transaction takes.
const maxBatch = 128

// Pruning: a pass, inside the write transaction of a batch of Add, deletes
// at most pruneStep keys whose retention has passed, at most once per
// pruneInterval of the Store's clock, unless the last pass found more than
// it could delete; then the next batch runs another. A store that takes no
// creates deletes nothing, and does not grow either.
const (
	pruneStep     = 1000
	pruneInterval = time.Minute
)

// Add stores p under a new ID and returns it as stored. An empty Status is
// stored as NULL. The pet is committed, with synchronous=FULL, and visible
// to every Get and List, when Add returns.
//
// Concurrent calls are written together, in one transaction and one commit;
// a call that finds none in flight is written at once, alone. A key is
// looked up in that transaction, so Add sees every key committed before, by
// any process, and those written earlier in the batch: a call with a key in
// use waits for the create that uses it and never gets
// petstore.ErrIdempotencyKeyInUse.
func (s *Store) Add(ctx context.Context, p petstore.NewPet, opts petstore.AddOptions) (petstore.Pet, bool, error) {
	if err := cmp.Or(p.Validate(), ctx.Err()); err != nil {
		return petstore.Pet{}, false, fmt.Errorf("sqlitestore: add pet: %w", err)
	}
	c := &addCall{pet: p, key: opts.IdempotencyKey}
	if c.key != "" {
		c.principal = petstore.Principal(ctx) // a create without a key has no use for it
	}
	switch err := s.adds.Send(ctx, c); {
	case errors.Is(err, sqlstore.ErrClosed):
		return petstore.Pet{}, false, closedError(s.file, "add pet")
	case err != nil:
		return petstore.Pet{}, false, fmt.Errorf("sqlitestore: add pet: %w", err)
	case c.err != nil:
		return petstore.Pet{}, false, c.err
	}
	return c.out, c.replayed, nil
}

// An addCall is one call of Add.
type addCall struct {
	sqlstore.Call
	pet            petstore.NewPet
	principal, key string

	// Set by write.
	out      petstore.Pet
	replayed bool
	err      error
}

// write is the Write of the Store's queue: it writes the calls of batch in
// one transaction and sets every call's outcome. When the transaction
// fails, nothing of it is stored and every call gets the error, replays
// included. The transaction is interrupted when every call's context is
// done.
func (s *Store) write(batch []*addCall) (next bool) {
	ctx, cancel := sqlstore.BatchContext(batch, false)
	defer cancel()
	if err := s.commit(ctx, batch); err != nil {
		if code(err) == sqlite3.SQLITE_FULL && errors.Is(s.idsLeft(ctx), sqlstore.ErrNoIDLeft) {
			err = sqlstore.ErrNoIDLeft // not a full disk: no retry helps
		}
		for _, c := range batch {
			c.err = wrapError(c.Ctx, s.file, "add pet", err)
		}
		return true
	}
	var last int64 // the highest ID of the batch
	for _, c := range batch {
		last = max(last, c.out.ID)
	}
	s.wakes.AddedHere(last)
	s.boundWAL(ctx)
	return true
}

// commit runs the calls in one BEGIN IMMEDIATE transaction, with a pass of
// pruning when one is due, and sets each call's outcome; when it returns an
// error, nothing was stored.
func (s *Store) commit(ctx context.Context, calls []*addCall) (err error) {
	now := s.opt.Now()
	if len(calls) == 1 && calls[0].key == "" && now.Before(s.nextPrune) {
		// One INSERT, run as a transaction of its own, which SQLite runs
		// as it runs BEGIN IMMEDIATE: it saves the lone caller BEGIN and
		// COMMIT.
		err := s.insert(ctx, calls[0])
		if err == nil {
			s.commits.Add(1)
		}
		return err
	}
	if _, err := s.begin.ExecContext(ctx); err != nil {
		return err
	}
	defer func() {
		if err != nil {
			// SQLite has already rolled back after some errors (a full disk,
			// an interrupt), and then says that no transaction is active;
			// anything else is logged.
			if _, rerr := s.w.ExecContext(context.WithoutCancel(ctx), "ROLLBACK"); rerr != nil && !strings.Contains(rerr.Error(), "no transaction is active") {
				s.opt.Logger.LogAttrs(ctx, slog.LevelWarn, "sqlitestore: rollback failed", slog.String("path", s.file), slog.Any("error", rerr))
			}
		}
	}()
	stamp := now.UnixMilli()
	cutoff := now.Add(-s.opt.KeyRetention).UnixMilli() // keys created before it are forgotten
	var forgotten int64
	for _, c := range calls {
		if c.key != "" {
			var (
				created int64
				stored  petstore.Pet
			)
			err := s.lookupKey.QueryRowContext(ctx, c.principal, c.key).Scan(&created, &stored.ID, &stored.Name, &stored.CategoryID, &stored.Status)
			switch {
			case err == nil && created >= cutoff:
				if stored.NewPet == c.pet {
					c.out, c.replayed = stored, true
				} else {
					c.err = fmt.Errorf("sqlitestore: add pet: %w", petstore.ErrIdempotencyKeyReused)
				}
				continue
			case err == nil: // past its retention: forget it now, exactly on time
				if _, err := s.deleteKey.ExecContext(ctx, c.principal, c.key); err != nil {
					return err
				}
				forgotten++
			case !errors.Is(err, sql.ErrNoRows):
				return err
			}
		}
		if err := s.insert(ctx, c); err != nil {
			return err
		}
		if c.key != "" {
			if _, err := s.insertKey.ExecContext(ctx, c.principal, c.key, c.out.ID, stamp); err != nil {
				return err
			}
		}
	}
	pass := !now.Before(s.nextPrune)
	var pruned int64
	if pass {
		pruned = s.prune(ctx, cutoff)
	}
	if _, err := s.commitTx.ExecContext(ctx); err != nil {
		return err
	}
	s.commits.Add(1)
	s.pruned.Add(forgotten + pruned)
	if pass {
		s.nextPrune = now.Add(pruneInterval)
		if pruned == pruneStep {
			s.nextPrune = time.Time{} // more to do: the next batch runs another pass
		}
		s.opt.Logger.LogAttrs(ctx, slog.LevelDebug, "sqlitestore: forgot idempotency keys",
			slog.String("path", s.file), slog.Int64("keys", pruned+forgotten),
			slog.Time("before", time.UnixMilli(cutoff)), slog.Int64("total", s.pruned.Load()))
	}
	return nil
}

// insert inserts the pet of c and sets c's outcome.
func (s *Store) insert(ctx context.Context, c *addCall) error {
	res, err := s.insertPet.ExecContext(ctx, c.pet.Name, c.pet.CategoryID, string(c.pet.Status))
	if err != nil {
		return err
	}
	id, err := res.LastInsertId()
	c.out = petstore.Pet{ID: id, NewPet: c.pet}
	return err
}

// prune deletes up to pruneStep keys created before cutoff, in a savepoint
// of the transaction in progress, and returns how many; when it fails, it
// undoes only itself, logs the error, and the batch goes on.
func (s *Store) prune(ctx context.Context, cutoff int64) int64 {
	fail := func(err error) int64 {
		s.opt.Logger.LogAttrs(ctx, slog.LevelWarn, "sqlitestore: forgetting idempotency keys failed; creates go on",
			slog.String("path", s.file), slog.Any("error", err))
		_, _ = s.w.ExecContext(ctx, "ROLLBACK TO prune")
		_, _ = s.w.ExecContext(ctx, "RELEASE prune")
		return 0
	}
	if _, err := s.w.ExecContext(ctx, "SAVEPOINT prune"); err != nil {
		return fail(err)
	}
	res, err := s.pruneKeys.ExecContext(ctx, cutoff, pruneStep)
	if err != nil {
		return fail(err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fail(err)
	}
	if _, err := s.w.ExecContext(ctx, "RELEASE prune"); err != nil {
		return fail(err)
	}
	return n
}
