// Package pgtest points tests at the PostgreSQL server they run against, and
// starts throwaway servers (clusters, standbys, PgBouncer) for the tests that
// need one of their own.
package pgtest

import (
	"net"
	"os"
	"path/filepath"
	"testing"
)

// URLVar names the environment variable that holds the server's URL.
const URLVar = "PETSTORE_POSTGRES_URL"

// URL returns the URL of the PostgreSQL server to test against. Without one
// it skips the test with a message saying how to run it (see skip).
func URL(tb testing.TB) string {
	tb.Helper()
	url := os.Getenv(URLVar)
	if url == "" {
		skip(tb, URLVar+" is not set, so the PostgreSQL tests cannot run. Start a server and set it, e.g.\n"+
			"\t"+URLVar+"='postgres://postgres@127.0.0.1:5432/test?sslmode=disable' go test ./...")
	}
	return url
}

// skip skips the test with msg, or, under CI=true, fails it: there a
// skipped database test must not pass for a tested one.
func skip(tb testing.TB, msg string) {
	tb.Helper()
	if os.Getenv("CI") == "true" {
		tb.Fatal(msg)
	}
	tb.Skip(msg)
}

// FreePort returns a TCP port of 127.0.0.1 that nothing listens on.
func FreePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// openTempDir opens dir, a temporary directory of a test that runs as root,
// and its parent to the user postgres, which writes in dir.
func openTempDir(t *testing.T, dir string) {
	t.Helper()
	if err := os.Chmod(filepath.Dir(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
}

// executable reports whether dir/name is an executable file.
func executable(dir, name string) bool {
	fi, err := os.Stat(filepath.Join(dir, name))
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}
