package main

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/metric"

	"github.com/petstore-go/petstore/sqlitestore"
)

// registerDataMetrics adds to the meters of mp, for /metrics: the size of
// the SQLite -wal file and the checkpoints that a reader blocked (store
// nil: none), and the outcome of scheduled backups (backups nil: none).
func registerDataMetrics(mp metric.MeterProvider, store *sqlitestore.Store, backups *backupScheduler) error {
	m := mp.Meter("github.com/petstore-go/petstore/cmd/petstore")
	var (
		instruments []metric.Observable
		observe     []func(metric.Observer)
	)
	if store != nil {
		size, err := m.Int64ObservableGauge("petstore.sqlite.wal.size", metric.WithUnit("By"),
			metric.WithDescription("Size of the SQLite -wal file; it grows past its limit while a reader holds an old snapshot."))
		if err != nil {
			return err
		}
		blocked, err := m.Int64ObservableCounter("petstore.sqlite.checkpoints.blocked",
			metric.WithDescription("Checkpoints of the -wal file, past its limit, that a reader holding an old snapshot kept from finishing."))
		if err != nil {
			return err
		}
		instruments = append(instruments, size, blocked)
		observe = append(observe, func(o metric.Observer) {
			if n, err := store.WALSize(); err == nil {
				o.ObserveInt64(size, n)
			}
			o.ObserveInt64(blocked, store.CheckpointsBlocked())
		})
	}
	if backups != nil {
		ok, err := m.Int64ObservableCounter("petstore.backup.successes", metric.WithDescription("Scheduled backups that succeeded."))
		if err != nil {
			return err
		}
		failed, err := m.Int64ObservableCounter("petstore.backup.failures", metric.WithDescription("Scheduled backups that failed; the log says why."))
		if err != nil {
			return err
		}
		last, err := m.Float64ObservableGauge("petstore.backup.last_success", metric.WithUnit("s"),
			metric.WithDescription("Unix time of the last scheduled backup that succeeded; 0 before the first."))
		if err != nil {
			return err
		}
		instruments = append(instruments, ok, failed, last)
		observe = append(observe, func(o metric.Observer) {
			o.ObserveInt64(ok, backups.successes.Load())
			o.ObserveInt64(failed, backups.failures.Load())
			var t float64
			if ns := backups.lastOK.Load(); ns != 0 {
				t = float64(ns) / float64(time.Second)
			}
			o.ObserveFloat64(last, t)
		})
	}
	if len(instruments) == 0 {
		return nil
	}
	_, err := m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		for _, f := range observe {
			f(o)
		}
		return nil
	}, instruments...)
	return err
}
