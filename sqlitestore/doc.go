// Package sqlitestore is a petstore.Store that keeps pets in a SQLite file,
// through modernc.org/sqlite (pure Go: no cgo, no server to install).
package sqlitestore
