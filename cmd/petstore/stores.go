package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/memstore"
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
	switch c.store = storeKind(c.storeFlag); c.store {
	case "":
		c.store = storeSQLite
		if c.postgresURL != "" {
			c.store = storePostgres
		}
	case storeSQLite, storeMemory, storePostgres:
	default:
		return fmt.Errorf("-store %q: want sqlite, memory or postgres", c.storeFlag)
	}
	data, url := c.dataFile != "", c.postgresURL != ""
	switch {
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
	}
	if c.replicaURLs = getenv(replicaURLsVar); c.replicaURLs != "" && c.store != storePostgres {
		return fmt.Errorf("%s names PostgreSQL replicas, but pets are kept in %s; name the primary in %s, or unset %s",
			replicaURLsVar, c.store, postgresURLVar, replicaURLsVar)
	}
	if c.postgresListenURL != "" && c.store != storePostgres {
		return fmt.Errorf("-postgres-listen (or %s) names where to hear of PostgreSQL's new pets, but pets are kept in %s; drop it", postgresListenURLVar, c.store)
	}
	if c.store == storeSQLite && c.dataFile == "" {
		c.dataFile = defaultDataFile
	}
	return nil
}

// openStore opens the store that c selects, and returns it and what closes
// it.
func openStore(ctx context.Context, c config, logger *slog.Logger) (petstore.Store, func(), error) {
	switch c.store {
	case storePostgres:
		s, closePool, err := openPostgresStore(ctx, c.postgresURL, c.replicaURLs, c.postgresListenURL, c.migrate, logger)
		if err != nil {
			return nil, nil, err
		}
		return s, closePool, nil
	case storeMemory:
		logger.Info("petstore: storing pets in memory; they are lost when the process stops")
		return memstore.New(), func() {}, nil
	}
	s, err := sqlitestore.Open(c.dataFile, sqlitestore.WithLogger(logger))
	if err != nil {
		return nil, nil, fmt.Errorf("%w; -data or %s names another file, -store memory keeps pets in memory", err, dataFileVar)
	}
	logger.Info("petstore: storing pets in a SQLite file", "path", s.Path())
	return s, func() {
		if err := s.Close(); err != nil {
			logger.Error("petstore: closing the SQLite file", "path", s.Path(), "err", err)
		}
	}, nil
}
