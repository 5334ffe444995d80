package main

import (
	"context"
	"errors"
	"time"

	"go.opentelemetry.io/otel/metric"

	"github.com/petstore-go/petstore/sqlitestore"
)

// registerDataMetrics adds to the meters of mp, for /metrics: the size of
// the SQLite -wal file and the checkpoints that a reader blocked (store
// nil: none), and the outcome of scheduled backups (backups nil: none).
func registerDataMetrics(mp metric.MeterProvider, store *sqlitestore.Store, backups *sqlitestore.Backups) error {
	m := mp.Meter("github.com/petstore-go/petstore/cmd/petstore")
	if store != nil {
		size, err1 := m.Int64ObservableGauge("petstore.sqlite.wal.size", metric.WithUnit("By"),
			metric.WithDescription("Size of the SQLite -wal file; it grows past its limit while a reader holds an old snapshot."))
		blocked, err2 := m.Int64ObservableCounter("petstore.sqlite.checkpoints.blocked",
			metric.WithDescription("Checkpoints of the -wal file, past its limit, that a reader holding an old snapshot kept from finishing."))
		if err := errors.Join(err1, err2); err != nil {
			return err
		}
		if _, err := m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
			if n, err := store.WALSize(); err == nil {
				o.ObserveInt64(size, n)
			}
			o.ObserveInt64(blocked, store.CheckpointsBlocked())
			return nil
		}, size, blocked); err != nil {
			return err
		}
	}
	if backups == nil {
		return nil
	}
	ok, err1 := m.Int64ObservableCounter("petstore.backup.successes", metric.WithDescription("Scheduled backups that succeeded."))
	failed, err2 := m.Int64ObservableCounter("petstore.backup.failures", metric.WithDescription("Scheduled backups that failed; the log says why."))
	last, err3 := m.Float64ObservableGauge("petstore.backup.last_success", metric.WithUnit("s"),
		metric.WithDescription("Unix time of the last scheduled backup that succeeded; 0 before the first."))
	if err := errors.Join(err1, err2, err3); err != nil {
		return err
	}
	_, err := m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		st := backups.Stats()
		o.ObserveInt64(ok, st.Successes)
		o.ObserveInt64(failed, st.Failures)
		lastOK := 0.0 // before the first
		if !st.LastSuccess.IsZero() {
			lastOK = float64(st.LastSuccess.UnixNano()) / float64(time.Second)
		}
		o.ObserveFloat64(last, lastOK)
		return nil
	}, ok, failed, last)
	return err
}
