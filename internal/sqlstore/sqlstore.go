// Package sqlstore holds what the SQL stores (sqlitestore, pgstore) share:
// the options they both take, the loader of their migration files, and the
// queue and context of a batch of creates committed together.
package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/petstore-go/petstore"
)

// Options are what the options of both stores set: WithKeyRetention,
// WithClock and WithLogger, whose doc comments live in each store.
type Options struct {
	KeyRetention time.Duration
	Now          func() time.Time
	Logger       *slog.Logger
}

// DefaultOptions returns the options of a store that was given none:
// petstore.MinKeyRetention, time.Now and a logger that discards.
func DefaultOptions() Options {
	return Options{KeyRetention: petstore.MinKeyRetention, Now: time.Now, Logger: slog.New(slog.DiscardHandler)}
}

// SetKeyRetention is WithKeyRetention: at least petstore.MinKeyRetention.
func (o *Options) SetKeyRetention(d time.Duration) error {
	if d < petstore.MinKeyRetention {
		return fmt.Errorf("WithKeyRetention: %v is shorter than petstore.MinKeyRetention (%v); give at least that", d, petstore.MinKeyRetention)
	}
	o.KeyRetention = d
	return nil
}

// SetClock is WithClock: any clock but nil.
func (o *Options) SetClock(now func() time.Time) error {
	if now == nil {
		return errors.New("WithClock: the clock is nil; give time.Now or a function of your own")
	}
	o.Now = now
	return nil
}

// SetLogger is WithLogger: any logger but nil.
func (o *Options) SetLogger(l *slog.Logger) error {
	if l == nil {
		return errors.New("WithLogger: the logger is nil; give slog.New(slog.DiscardHandler) to discard")
	}
	o.Logger = l
	return nil
}

// ErrNoIDLeft is wrapped by the error of a create, and of Check, in a
// store that has issued the last ID there is, 2⁶³−1: it can create no pet
// again. It wraps no petstore.ErrUnavailable, since no retry can help, so
// the handler answers 500. Import refuses the IDs that lead there (see
// internal/export).
var ErrNoIDLeft = errors.New("petstore: no pet ID left: the store has issued 9223372036854775807, " +
	"the highest ID there is, and can create no more pets")

// A Migration is one version of a store's schema: a file named
// NNNN_description.sql.
type Migration struct {
	Version int
	Name    string // the file's name
	SQL     string
}

// Migrations returns the migrations in the files dir/*.sql of fsys,
// ascending by version, which must run 1, 2, 3, ... without gaps. The
// files are part of a store's binary, so an error here is a bug that the
// store's tests catch.
func Migrations(fsys fs.FS, dir string) ([]Migration, error) {
	names, err := fs.Glob(fsys, dir+"/*.sql")
	if err != nil {
		return nil, err
	}
	ms := make([]Migration, 0, len(names))
	for _, name := range names {
		base := path.Base(name)
		prefix, _, ok := strings.Cut(base, "_")
		version, err := strconv.Atoi(prefix)
		if !ok || err != nil || version < 1 {
			return nil, fmt.Errorf("migration file %s is not named NNNN_description.sql", base)
		}
		text, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		ms = append(ms, Migration{Version: version, Name: base, SQL: string(text)})
	}
	slices.SortFunc(ms, func(a, b Migration) int { return a.Version - b.Version })
	for i, m := range ms {
		if m.Version != i+1 {
			return nil, fmt.Errorf("migration %s: versions must run 1, 2, 3, ... without gaps", m.Name)
		}
	}
	return ms, nil
}

// BatchContext returns a context for the transaction of a batch of calls:
// it carries the values of the first call's context and is cancelled once
// every call's context is done, so that a call that gives up while its
// batch is in flight does not fail the batch for the others. With
// earliest, it also expires at the earliest deadline of the calls. For a
// lone call, it is that call's context.
func BatchContext[C interface{ call() *Call }](calls []C, earliest bool) (context.Context, context.CancelFunc) {
	if len(calls) == 1 {
		return calls[0].call().Ctx, func() {}
	}
	base := context.WithoutCancel(calls[0].call().Ctx)
	var deadline time.Time
	if earliest {
		for _, c := range calls {
			if d, ok := c.call().Ctx.Deadline(); ok && (deadline.IsZero() || d.Before(deadline)) {
				deadline = d
			}
		}
	}
	var (
		bctx   context.Context
		cancel context.CancelFunc
	)
	if deadline.IsZero() {
		bctx, cancel = context.WithCancel(base)
	} else {
		bctx, cancel = context.WithDeadline(base, deadline)
	}
	var done atomic.Int64 // the calls whose context is done
	stops := make([]func() bool, len(calls))
	for i, c := range calls {
		stops[i] = context.AfterFunc(c.call().Ctx, func() {
			if done.Add(1) == int64(len(calls)) {
				cancel()
			}
		})
	}
	return bctx, func() {
		for _, stop := range stops {
			stop()
		}
		cancel()
	}
}
