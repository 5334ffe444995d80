package pgstore

import (
	"context"
	"fmt"
	"hash/fnv"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/petstore-go/petstore"
)

var _ petstore.AddNotifier = (*Store)(nil)

// channelOf returns the channel on which the Stores of relation, the table
// as their SQL names it, notify their adds: a name of their own, which
// needs no quoting.
func channelOf(relation string) string {
	h := fnv.New64a()
	h.Write([]byte(relation))
	return fmt.Sprintf("petstore_%016x", h.Sum64())
}

// Bounds of the wait between two attempts of the listener to connect.
const (
	listenMinBackoff = 50 * time.Millisecond
	listenMaxBackoff = 5 * time.Second
)

// WithListenURL sets the connection string of the connection on which the
// Store listens for the adds of other Stores (see Store.NotifyAdds). The
// default is the pool's configuration. A pooler in transaction mode, such
// as PgBouncer's, does not carry LISTEN: give the URL of the primary
// itself, or of a pool in session mode, here.
// A string that does not parse makes New fail with why, and never with the
// string itself, whose password pgx's own message can show.
func WithListenURL(url string) Option {
	return optionFunc(func(c *config) error {
		cfg, err := pgx.ParseConfig(url)
		if err != nil {
			// Only why, after the string that pgx quotes first ("cannot
			// parse `string`: why"): it masks the password only where it
			// can tell where the password ends.
			why := "it does not parse"
			if i := strings.LastIndex(err.Error(), "`: "); i >= 0 {
				why = err.Error()[i+len("`: "):]
			}
			return fmt.Errorf("WithListenURL: the connection string is not valid: %s", why)
		}
		c.listen = cfg
		return nil
	})
}

// NotifyAdds calls wake after pets were added to the table, by this Store
// or any other on the same database that names the table the same way
// (WithSchema, WithTable), until ctx is done (see petstore.AddNotifier).
//
// Each batch of Adds notifies once, in its transaction, with the highest
// ID it added; the Store hears the notifications with LISTEN on one
// connection of its own, outside the pool (see WithListenURL), open while
// any watcher is left. An Add through the Store wakes them as it returns,
// and its notification does not wake them again. With WithReplicas, a
// notification raises the ID that reads wait for a replica to hold. A
// connection that breaks is opened again, after a wait that doubles from
// 50 ms to 5 s, and the watchers are woken once it listens again, so that
// they read what they missed meanwhile.
func (s *Store) NotifyAdds(ctx context.Context, wake func()) {
	s.wakes.Add(ctx, wake, s.listen)
}

// listen hears the table's notifications until ctx is done.
func (s *Store) listen(ctx context.Context) {
	backoff := listenMinBackoff
	for {
		err := s.listenOnce(ctx, func() { backoff = listenMinBackoff })
		if ctx.Err() != nil {
			return
		}
		s.opt.Logger.LogAttrs(ctx, slog.LevelWarn, "pgstore: the listener for adds lost its connection; watches poll until it is back",
			slog.String("error", err.Error()), slog.Duration("retry", backoff))
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, listenMaxBackoff)
	}
}

// listenOnce connects, listens, calls listening and then wakes the
// watchers (adds may have been missed before), and wakes them again at
// each notification, until the connection fails or ctx is done.
func (s *Store) listenOnce(ctx context.Context, listening func()) error {
	conn, err := pgx.ConnectConfig(ctx, s.listenConfig.Copy())
	if err != nil {
		return err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		defer cancel()
		_ = conn.Close(cctx)
	}()
	if _, err := conn.Exec(ctx, "LISTEN "+channelOf(s.relation)); err != nil {
		return err
	}
	listening()
	s.wakes.Wake()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		id, err := strconv.ParseInt(n.Payload, 10, 64)
		if err != nil {
			s.wakes.Wake()
			continue
		}
		s.replicas.wrote(id)
		s.wakes.Added(id) // not again for the Store's own adds
	}
}
