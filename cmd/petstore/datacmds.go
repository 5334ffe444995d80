package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/internal/export"
	"github.com/petstore-go/petstore/sqlitestore"
)

// subcommands are the subcommands, by name.
var subcommands = map[string]func(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error{
	"migrate": runMigrate,
	"backup":  runBackup,
	"restore": runRestore,
	"export":  runExport,
	"import":  runImport,
}

// subcommand parses args for a subcommand: the flags of the server's
// table that names lists, and those already on fs; it wants between minArgs
// and maxArgs arguments. usage and about make its -help.
func subcommand(fs *flag.FlagSet, args []string, getenv func(string) string, stdout io.Writer,
	usage, about string, minArgs, maxArgs int, names ...string) (config, map[string]bool, error) {
	var c config
	table := slices.DeleteFunc(c.settings(), func(s setting) bool { return !slices.Contains(names, s.name) })
	given, err := parseSettings(fs, table, args, getenv, stdout, "Usage: "+usage+"\n\n"+about+"\n")
	if err == nil && (fs.NArg() < minArgs || fs.NArg() > maxArgs) {
		err = fmt.Errorf("usage: %s", usage)
	}
	return c, given, err
}

// runBackup is petstore backup (see sqlitestore.Backup).
func runBackup(ctx context.Context, args []string, getenv func(string) string, stdout, _ io.Writer) error {
	fs := flag.NewFlagSet("petstore backup", flag.ContinueOnError)
	c, _, err := subcommand(fs, args, getenv, stdout, "petstore backup [-data FILE] BACKUP",
		"Writes a consistent copy of the data file to BACKUP, while the server goes on serving; BACKUP is replaced only once the copy is complete.", 1, 1, "data")
	if err != nil {
		return err
	}
	info, err := sqlitestore.Backup(ctx, cmp.Or(c.dataFile, defaultDataFile), fs.Arg(0))
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "backed up %d pets to %s: %d bytes in %v\n", info.Pets, info.Path, info.Bytes, info.Duration.Round(time.Millisecond))
	return nil
}

// runRestore is petstore restore (see sqlitestore.Restore).
func runRestore(ctx context.Context, args []string, getenv func(string) string, stdout, _ io.Writer) error {
	fs := flag.NewFlagSet("petstore restore", flag.ContinueOnError)
	c, _, err := subcommand(fs, args, getenv, stdout, "petstore restore [-data FILE] BACKUP",
		"Replaces the data file with a copy of BACKUP, keeping the file it replaces beside it. Stop the server first: it refuses while one holds the file.", 1, 1, "data")
	if err != nil {
		return err
	}
	file, _ := filepath.Abs(cmp.Or(c.dataFile, defaultDataFile))
	replaced, err := sqlitestore.Restore(ctx, fs.Arg(0), file)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "restored %s from %s\n", file, fs.Arg(0))
	if replaced != "" {
		fmt.Fprintf(stdout, "the file it replaced is kept as %s\n", replaced)
	}
	return nil
}

// dumpStore is a store that export reads and import fills.
type dumpStore interface {
	Export(context.Context) iter.Seq2[export.Record, error]
	Import(context.Context, iter.Seq2[export.Record, error]) (int64, error)
}

// openDumpStore opens the store that the server would choose, and returns
// its name and what closes it. Export refuses a SQLite file that does not
// exist rather than make it; import makes or upgrades PostgreSQL's tables.
func openDumpStore(ctx context.Context, c config, given map[string]bool, getenv func(string) string, forImport bool) (dumpStore, string, func(), error) {
	if err := c.chooseStore(given, getenv); err != nil {
		return nil, "", nil, err
	}
	if c.store == storePostgres { // export and import read and write the primary
		s, closePool, err := openPostgresStore(ctx, c.postgresURL, "", "", forImport, slog.New(slog.DiscardHandler))
		if err != nil {
			return nil, "", nil, err
		}
		return s, "PostgreSQL table " + s.Table(), closePool, nil
	}
	if _, err := os.Stat(c.dataFile); !forImport && errors.Is(err, fs.ErrNotExist) {
		abs, _ := filepath.Abs(c.dataFile)
		return nil, "", nil, fmt.Errorf("%s does not exist; -data or %s names the data file, %s a PostgreSQL database", abs, dataFileVar, postgresURLVar)
	}
	s, err := sqlitestore.Open(c.dataFile)
	if err != nil {
		return nil, "", nil, err
	}
	return s, s.Path(), func() { s.Close() }, nil
}

// runExport is petstore export, in the format of internal/export.
func runExport(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("petstore export", flag.ContinueOnError)
	out := fs.String("o", "", "`file` to write to, made owner-only, since it holds the callers' keys (default: standard output)")
	c, given, err := subcommand(fs, args, getenv, stdout, "petstore export [-data FILE | -postgres URL] [-o FILE]",
		"Writes every pet and every idempotency key still kept, with its caller and age, as JSON lines in ID order, for petstore import.", 0, 0, "data", "postgres")
	if err != nil {
		return err
	}
	s, name, release, err := openDumpStore(ctx, c, given, getenv, false)
	if err != nil {
		return err
	}
	defer release()
	w, closeOut := stdout, func() error { return nil }
	if *out != "" {
		f, err := os.OpenFile(*out, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
		if err != nil {
			return err
		}
		defer f.Close()
		w, closeOut = f, f.Close
	}
	start := time.Now()
	pets, keys, err := export.Write(w, s.Export(ctx))
	if err != nil {
		return fmt.Errorf("export from %s: %w", name, err)
	}
	if err := closeOut(); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "exported %d pets and %d idempotency keys from %s in %v\n", pets, keys, name, time.Since(start).Round(time.Millisecond))
	if sqlite, ok := s.(*sqlitestore.Store); ok {
		file := keyFile(sqlite.Path())
		key, err := readKeyFile(file)
		if err == nil {
			ctx, err = petstore.APIKeys(key).Authenticate(ctx, petstore.OpNone, key)
		}
		if err == nil {
			fmt.Fprintf(stderr, "the API key kept in %s is the caller %s: give it to the store you import into as it is, "+
				"without a name (%s=\"$(cat %s)\"), so that its keyed creates replay there (docs/backup.md)\n",
				file, petstore.Principal(ctx), apiKeysVar, file)
		}
	}
	return nil
}

// runImport is petstore import.
func runImport(ctx context.Context, args []string, getenv func(string) string, stdout, _ io.Writer) error {
	fs := flag.NewFlagSet("petstore import", flag.ContinueOnError)
	c, given, err := subcommand(fs, args, getenv, stdout, "petstore import [-data FILE | -postgres URL] [EXPORT]",
		"Loads what petstore export wrote (from EXPORT, or standard input) into a store that has never held a pet, keeping every ID and key.", 0, 1, "data", "postgres")
	if err != nil {
		return err
	}
	var in io.Reader = os.Stdin
	if fs.NArg() == 1 {
		f, err := os.Open(fs.Arg(0))
		if err != nil {
			return err
		}
		defer f.Close()
		in = f
	}
	s, name, release, err := openDumpStore(ctx, c, given, getenv, true)
	if err != nil {
		return err
	}
	defer release()
	start := time.Now()
	n, err := s.Import(ctx, export.Read(in, time.Now()))
	if err != nil {
		return fmt.Errorf("import into %s: %w; nothing was imported", name, err)
	}
	fmt.Fprintf(stdout, "imported %d pets into %s in %v\n", n, name, time.Since(start).Round(time.Millisecond))
	return nil
}
