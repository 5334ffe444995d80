package main

import (
	"fmt"
	"time"

	"github.com/petstore-go/petstore/sqlitestore"
)

// The variables of the -backup-* flags.
const (
	backupDirVar      = "PETSTORE_BACKUP_DIR"
	backupIntervalVar = "PETSTORE_BACKUP_INTERVAL"
	backupKeepVar     = "PETSTORE_BACKUP_KEEP"
)

// backupFlags are the flags of scheduled backups: off unless dir is set.
type backupFlags struct {
	dir      string
	interval time.Duration
	keep     int
	ready    bool // /readyz counts them
}

// check reports flags that cannot work for store, the store chosen.
func (b *backupFlags) check(store storeKind) error {
	switch {
	case b.dir == "":
		return nil
	case store != storeSQLite:
		return fmt.Errorf("-backup-dir: scheduled backups copy the SQLite data file; with %s, back up with the database's own tools (pg_dump), or none for -store memory", store)
	case b.interval <= 0:
		return fmt.Errorf("-backup-interval %v: want more than 0", b.interval)
	case b.keep < 1:
		return fmt.Errorf("-backup-keep %d: want 1 or more", b.keep)
	}
	return nil
}

// backupsReady is /readyz's check of backups with -backup-ready: it
// reports a last success (or, before the first, the start) older than
// twice the interval.
func backupsReady(b *sqlitestore.Backups, interval time.Duration) func() error {
	start := time.Now()
	return func() error {
		st := b.Stats()
		age := time.Since(start)
		if !st.LastSuccess.IsZero() {
			age = time.Since(st.LastSuccess)
		}
		switch {
		case age <= 2*interval:
			return nil
		case st.LastSuccess.IsZero():
			return fmt.Errorf("no backup has succeeded in the %v since start (-backup-interval %v; %d failed; see the log)", age.Round(time.Second), interval, st.Failures)
		}
		return fmt.Errorf("the last successful backup is %v old, more than twice -backup-interval (%v); %d failed since start (see the log)", age.Round(time.Second), interval, st.Failures)
	}
}
