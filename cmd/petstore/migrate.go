package main

import (
	"context"
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
	var c config
	intro := "Usage: " + migrateCommand + " [-postgres URL]\n\n" +
		"Creates or upgrades the PostgreSQL tables to the schema version this release needs, says what it did and exits.\n" +
		"Run it as the tables' owner; then serve with -migrate=false as a role that holds only the grants in docs/postgres.md.\n"
	fs := flag.NewFlagSet("petstore migrate", flag.ContinueOnError)
	if _, err := parseSettings(fs, settingsOf(c.settings(), "postgres"), args, getenv, stdout, intro); err != nil {
		return err
	}
	url := c.postgresURL
	if url == "" {
		return fmt.Errorf("%s needs the database's URL in %s or -postgres; the SQLite file is migrated by the server when it opens it",
			migrateCommand, postgresURLVar)
	}
	return migratePostgres(ctx, url, stdout)
}
