package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/internal/export"
)

// TestMoveBetweenStores moves a data set from SQLite to PostgreSQL and back
// with export and import, with the key that the first server made: each
// export of what was imported is the same, a keyed retry replays the pet
// created before the move, and the next ID is above every imported one.
func TestMoveBetweenStores(t *testing.T) {
	_, pgURL := postgresSchema(t)
	pgEnv := []string{postgresURLVar + "=" + pgURL}
	bin := buildServer(t)
	dir := t.TempDir()

	p := startServerIn(t, dir, bin, "", nil) // makes a key, kept in petstore.db.key
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	key := strings.TrimSpace(read(defaultDataFile + ".key"))
	principal := adminPrincipal(t, key)
	moved := petstore.NewPet{Name: "moved", CategoryID: 3, Status: petstore.StatusSold}
	before, _ := createPet(t, p.baseURL, key, "before-the-move", moved).pet()
	for i := range 5 {
		createPet(t, p.baseURL, key, "", petstore.NewPet{Name: fmt.Sprintf("plain %d", i), CategoryID: 1})
	}
	p.stop(t)

	check := func(wantNext int64, env []string, args ...string) {
		t.Helper()
		s := startServerIn(t, dir, bin, key, env, args...)
		a := createPet(t, s.baseURL, key, "before-the-move", moved)
		if pet, _ := a.pet(); a.status != http.StatusCreated || !a.replayed() || pet != before {
			t.Errorf("keyed retry after the move: %v; want pet %d replayed", a, before.ID)
		}
		next, _ := createPet(t, s.baseURL, key, "", petstore.NewPet{Name: "next", CategoryID: 1}).pet()
		if next.ID != wantNext {
			t.Errorf("the first create after the move got ID %d; want %d, past every imported one", next.ID, wantNext)
		}
		s.stop(t)
	}

	_, errOut, err := runCommand(t, dir, bin, nil, "export", "-o", "from-sqlite.jsonl")
	if want := "the API key kept in " + filepath.Join(dir, defaultDataFile+".key") + " is the caller " + principal + ":"; err != nil || !strings.Contains(errOut, want) {
		t.Errorf("export: %v, %s; want it to say %q", err, errOut, want)
	}
	if want := `"idempotencyKey":{"principal":"` + principal + `","key":"before-the-move"`; !strings.Contains(read("from-sqlite.jsonl"), want) {
		t.Errorf("the export lacks %s:\n%s", want, read("from-sqlite.jsonl"))
	}
	mustRun(t, dir, bin, pgEnv, "import", "from-sqlite.jsonl")
	mustRun(t, dir, bin, pgEnv, "export", "-o", "from-postgres.jsonl")
	if diff := cmp.Diff(read("from-sqlite.jsonl"), read("from-postgres.jsonl")); diff != "" {
		t.Fatalf("exports from SQLite and, after import, PostgreSQL (-sqlite +postgres):\n%s", diff)
	}
	if n := strings.Count(read("from-sqlite.jsonl"), "\n"); n != 7 {
		t.Errorf("the export has %d lines; want the header and 6 pets", n)
	}
	check(before.ID+6, pgEnv)

	mustRun(t, dir, bin, pgEnv, "export", "-o", "back.jsonl")
	mustRun(t, dir, bin, nil, "import", "-data", "back.db", "back.jsonl")
	mustRun(t, dir, bin, nil, "export", "-data", "back.db", "-o", "from-back.jsonl")
	if diff := cmp.Diff(read("back.jsonl"), read("from-back.jsonl")); diff != "" {
		t.Fatalf("exports from PostgreSQL and, after import, SQLite (-postgres +sqlite):\n%s", diff)
	}
	check(before.ID+7, nil, "-data", "back.db") // the pet made on PostgreSQL came along

	_, errOut, err = runCommand(t, dir, bin, pgEnv, "import", "from-sqlite.jsonl")
	if err == nil || !strings.Contains(errOut, "not empty") {
		t.Errorf("import into a store with pets: %v, %s; want a refusal", err, errOut)
	}
	for _, bad := range []struct{ line, want string }{
		{`{"id":9223372036854775807,"name":"b","categoryId":1}`, "line 3: pet ID 9223372036854775807 is above 9007199254740991"},
		{`{"id":2,"name":"b","categoryId":1,"idempotencyKey":{"principal":"p","key":"k","createdAt":"2999-01-01T00:00:00.000Z"}}`, "line 3: pet 2: the key was stored at 2999-01-01T00:00:00.000Z, in the future"},
	} {
		file := filepath.Join(dir, "bad.jsonl")
		os.WriteFile(file, []byte(export.Header+"\n"+`{"id":1,"name":"a","categoryId":1}`+"\n"+bad.line+"\n"), 0o600)
		_, errOut, err = runCommand(t, dir, bin, nil, "import", "-data", "new.db", file)
		if err == nil || !strings.Contains(errOut, bad.want) {
			t.Errorf("import of %s: %v, %s; want a refusal that says %q", bad.line, err, errOut, bad.want)
		}
	}
}

// TestExportImportMillion exports and imports 1,000,000 pets, half of them
// keyed, and logs the peak resident memory of each command, which must stay
// flat. It takes about a minute: set PETSTORE_TEST_MILLION=1 to run it.
func TestExportImportMillion(t *testing.T) {
	if os.Getenv("PETSTORE_TEST_MILLION") == "" {
		t.Skip("set PETSTORE_TEST_MILLION=1 to export and import 1,000,000 pets")
	}
	bin := buildServer(t)
	dir := t.TempDir()
	exportFile(t, filepath.Join(dir, "seed.jsonl"), 1_000_000)
	peak := func(args ...string) int64 {
		t.Helper()
		start := time.Now()
		cmd := newCommand(context.Background(), dir, bin, nil, args...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("petstore %v: %v\n%s", args, err, out)
		}
		rss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss // KiB
		t.Logf("petstore %s: %v, peak RSS %d MiB", strings.Join(args, " "), time.Since(start).Round(time.Millisecond), rss>>10)
		return rss << 10
	}
	const bound = 200 << 20 // well below what 1,000,000 pets in memory take
	if rss := peak("import", "seed.jsonl"); rss > bound {
		t.Errorf("import peaked at %d MiB of resident memory; want it flat, under %d MiB", rss>>20, bound>>20)
	}
	if rss := peak("export", "-o", "out.jsonl"); rss > bound {
		t.Errorf("export peaked at %d MiB of resident memory; want it flat, under %d MiB", rss>>20, bound>>20)
	}
}
