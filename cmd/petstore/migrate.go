package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
)

// runMigrate is the subcommand migrate: it brings the PostgreSQL tables to
// the schema version that this release needs, writes what it did to
// stdout, and returns, so that an operator can migrate as the tables'
// owner and serve, with -migrate=false, as a role that may not create
// tables. It takes -postgres, or reads PETSTORE_POSTGRES_URL.
func runMigrate(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	fs := flag.NewFlagSet("petstore migrate", flag.ContinueOnError)
	postgresURL := fs.String("postgres", "", "PostgreSQL `URL` of the database to migrate (default $"+postgresURLVar+")")
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, "Usage: "+migrateCommand+" [-postgres URL]\n\n"+
				"Creates or upgrades the PostgreSQL tables to the schema version this release needs, says what it did and exits.\n"+
				"Run it as the tables' owner; then serve with -migrate=false as a role that holds only the grants in docs/postgres.md.\n\nFlags:\n")
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return err
		}
		return fmt.Errorf("%v; see %s -help", err, migrateCommand)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q; see %s -help", fs.Args(), migrateCommand)
	}
	url := *postgresURL
	if url == "" {
		url = getenv(postgresURLVar)
	}
	if url == "" {
		return fmt.Errorf("%s needs the database's URL in %s or -postgres; the SQLite file is migrated by the server when it opens it",
			migrateCommand, postgresURLVar)
	}
	return migratePostgres(ctx, url, stdout)
}
