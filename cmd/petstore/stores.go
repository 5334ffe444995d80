package main

import (
	"cmp"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/sqlitestore"
)

// storeKind names a store that petstore can keep its pets in.
type storeKind string

const (
	storeSQLite   storeKind = "sqlite"
	storeMemory   storeKind = "memory"
	storePostgres storeKind = "postgres"
)

// defaultDataFile is the SQLite file used when nothing names a store.
const defaultDataFile = "petstore.db"

// chooseStore sets c.store, from -store, and the data file's default,
// refusing a configuration that names two stores; given, the flags given,
// tells which name to blame: a flag's or its variable's.
func (c *config) chooseStore(given map[string]bool, getenv func(string) string) error {
	from := func(flag, env string) string {
		if given[flag] {
			return "-" + flag
		}
		return env
	}
	dataFrom, urlFrom := from("data", dataFileVar), from("postgres", postgresURLVar)
	switch c.store {
	case "":
		c.store = storeSQLite
		if c.postgresURL != "" {
			c.store = storePostgres
		}
	case storeSQLite, storeMemory, storePostgres:
	default:
		return fmt.Errorf("-store %q: want sqlite, memory or postgres", c.store)
	}
	data, url := c.dataFile != "", c.postgresURL != ""
	switch c.replicaURLs = getenv(replicaURLsVar); {
	case data && url:
		return fmt.Errorf("two stores are named: a data file by %s (%s) and PostgreSQL by %s; keep one of them", dataFrom, c.dataFile, urlFrom)
	case c.store == storeMemory && url:
		return fmt.Errorf("two stores are named: -store memory, and %s; drop one of them", urlFrom)
	case c.store == storeMemory && data:
		return fmt.Errorf("two stores are named: -store memory, and %s; drop one of them", dataFrom)
	case c.store == storeSQLite && url:
		return fmt.Errorf("two stores are named: -store sqlite, and PostgreSQL by %s; drop one of them", urlFrom)
	case c.store == storePostgres && !url:
		return fmt.Errorf("-store postgres needs the database's URL in %s or -postgres", postgresURLVar)
	case c.replicaURLs != "" && c.store != storePostgres:
		return fmt.Errorf("%s names PostgreSQL replicas, but pets are kept in %s; name the primary in %s, or unset %s",
			replicaURLsVar, c.store, postgresURLVar, replicaURLsVar)
	case c.postgresListenURL != "" && c.store != storePostgres:
		return fmt.Errorf("-postgres-listen (or %s) names where to hear of PostgreSQL's new pets, but pets are kept in %s; drop it", postgresListenURLVar, c.store)
	case c.store == storeSQLite && c.dataFile == "":
		c.dataFile = defaultDataFile
	}
	return nil
}

// keyFile is the file that keeps the API key made for the data file dataFile.
func keyFile(dataFile string) string { return dataFile + ".key" }

// keptKey returns the API key kept in file, or keeps made there, owner-only,
// and returns it; note, which madeKey prints, says which.
func keptKey(file, made string) (key, note string, err error) {
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if errors.Is(err, fs.ErrExist) {
		// Made on an earlier start, or just now by another server starting at once.
		key, err := readKeyFile(file)
		return key, "the key was made on an earlier start and is kept in " + file + "\n", err
	}
	if err == nil {
		_, err = f.WriteString(made + "\n")
		if err = errors.Join(err, f.Sync(), f.Close()); err != nil {
			os.Remove(file)
		}
	}
	if err != nil {
		return "", "", fmt.Errorf("keeping the API key: %w", err)
	}
	return made, "the key is kept in " + file + " (owner-only) and accepted again on the next start; set PETSTORE_API_KEYS to choose keys\n", nil
}

// readKeyFile reads the key kept in file, refusing a file that another
// user could have written or may read.
func readKeyFile(file string) (string, error) {
	fi, err := os.Lstat(file)
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%s, which keeps the API key, is not a regular file; remove it to have a new key made", file)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return "", fmt.Errorf("%s, which keeps the API key, is owned by uid %d, not by this process's user (uid %d); remove it to have a new key made", file, st.Uid, os.Geteuid())
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return "", fmt.Errorf("%s, which keeps the API key, may be read or written by other users (mode %v); chmod 600 it, or remove it to have a new key made", file, perm)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", err
	}
	key := strings.TrimSpace(string(b))
	if len(key) < 32 || strings.ContainsAny(key, " \t,:") {
		return "", fmt.Errorf("%s does not hold an API key that petstore made; remove it to have a new key made", file)
	}
	return key, nil
}

// madeKey returns and prints the API key of a run without PETSTORE_API_KEYS:
// on SQLite the one kept beside the data file, otherwise a new one of 256
// random bits in base64url.
func madeKey(store petstore.Store, stdout io.Writer) ([]petstore.APIKey, error) {
	b := make([]byte, 32)
	rand.Read(b) // never fails: it crashes the program instead
	key, note := base64.RawURLEncoding.EncodeToString(b), ""
	if s, ok := store.(*sqlitestore.Store); ok {
		var err error
		if key, note, err = keptKey(keyFile(s.Path()), key); err != nil {
			return nil, err
		}
	}
	fmt.Fprintf(stdout, "PETSTORE_API_KEYS is not set; this run accepts the API key %s\n%s", key, note)
	return []petstore.APIKey{{Key: key}}, nil
}

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

// backupsReady is /readyz's check with -backup-ready: it reports a last
// success (or, before the first, the start) older than twice interval.
func backupsReady(b *sqlitestore.Backups, interval time.Duration) func() error {
	start := time.Now()
	return func() error {
		st := b.Stats()
		switch age := time.Since(cmp.Or(st.LastSuccess, start)); {
		case age <= 2*interval:
			return nil
		case st.LastSuccess.IsZero():
			return fmt.Errorf("no backup has succeeded in the %v since start (-backup-interval %v; %d failed; see the log)", age.Round(time.Second), interval, st.Failures)
		default:
			return fmt.Errorf("the last successful backup is %v old, more than twice -backup-interval (%v); %d failed since start (see the log)", age.Round(time.Second), interval, st.Failures)
		}
	}
}
