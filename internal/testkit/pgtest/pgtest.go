// Package pgtest points tests at the PostgreSQL server they run against.
package pgtest

import (
	"os"
	"testing"
)

// URLVar names the environment variable that holds the server's URL.
const URLVar = "PETSTORE_POSTGRES_URL"

// URL returns the URL of the PostgreSQL server to test against. Without one
// it skips the test with a message saying how to run it, or, under CI=true,
// fails it: there a skipped database test must not pass for a tested one.
func URL(tb testing.TB) string {
	tb.Helper()
	url := os.Getenv(URLVar)
	if url == "" {
		const msg = URLVar + " is not set, so the PostgreSQL tests cannot run. Start a server and set it, e.g.\n" +
			"\t" + URLVar + "='postgres://postgres@127.0.0.1:5432/test?sslmode=disable' go test ./..."
		if os.Getenv("CI") == "true" {
			tb.Fatal(msg)
		}
		tb.Skip(msg)
	}
	return url
}
