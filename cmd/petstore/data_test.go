package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"
	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/internal/export"
	"github.com/petstore-go/petstore/sqlitestore"
)

// openPets returns every pet of the data file at path.
func openPets(t *testing.T, path string) []petstore.Pet {
	t.Helper()
	s, err := sqlitestore.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	pets, err := s.List(context.Background(), petstore.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return pets
}

// TestBackupWhileServing backs the data file up under createLoad: the
// backup holds every pet acknowledged before it began, and a server on the
// backup replays the keyed creates. Then petstore restore refuses while the
// server holds the data file, and replaces it, keeping the old one, once the
// server has stopped.
func TestBackupWhileServing(t *testing.T) {
	const key = "backup-key"
	bin, dir := buildServer(t), t.TempDir()
	p := startServerIn(t, dir, bin, key, nil)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	_, wait := createLoad(ctx, t, p, key, "c", false)
	time.Sleep(time.Second)
	backup := filepath.Join(dir, "backup.db")
	began := time.Now()
	out := mustRun(t, dir, bin, nil, "backup", backup)
	time.Sleep(200 * time.Millisecond)
	cancel()
	creates := wait()
	if !regexp.MustCompile(`^backed up \d+ pets to \S+: \d+ bytes in \S+\n$`).MatchString(out) {
		t.Errorf("petstore backup printed %q; want what it wrote: pets, bytes, time", out)
	}

	got := map[int64]petstore.Pet{}
	for _, pet := range openPets(t, backup) {
		got[pet.ID] = pet
	}
	var keyed []loadCreate
	for _, c := range creates {
		if !c.acked.Before(began) {
			continue
		}
		if diff := cmp.Diff(c.pet, got[c.pet.ID]); diff != "" {
			t.Fatalf("a pet acknowledged before the backup began (-want +backup):\n%s", diff)
		}
		if c.key != "" && len(keyed) < 50 {
			keyed = append(keyed, c)
		}
	}
	served := startServer(t, bin, key, nil, "-data", backup)
	for _, c := range keyed {
		a := createPet(t, served.baseURL, key, c.key, c.pet.NewPet)
		if pet, _ := a.pet(); a.status != http.StatusCreated || !a.replayed() || pet != c.pet {
			t.Fatalf("keyed retry of pet %d on a server of the backup: %v; want it replayed", c.pet.ID, a)
		}
	}
	served.stop(t)

	_, errOut, err := runCommand(t, dir, bin, nil, "restore", backup)
	if err == nil || !strings.Contains(errOut, "stop it first") {
		t.Fatalf("restore while serving: %v, %s; want a refusal that says to stop the server", err, errOut)
	}
	p.stop(t)
	live, backedUp := openPets(t, filepath.Join(dir, defaultDataFile)), openPets(t, backup)
	out = mustRun(t, dir, bin, nil, "restore", backup)
	replaced := regexp.MustCompile(`kept as (\S+)\n`).FindStringSubmatch(out)
	if replaced == nil {
		t.Fatalf("restore printed %q; want where the replaced file is kept", out)
	}
	if diff := cmp.Diff(backedUp, openPets(t, filepath.Join(dir, defaultDataFile))); diff != "" {
		t.Errorf("restored pets (-backup +got):\n%s", diff)
	}
	if diff := cmp.Diff(live, openPets(t, replaced[1])); diff != "" {
		t.Errorf("the replaced file's pets (-before the restore +kept):\n%s", diff)
	}
	if len(live) <= len(backedUp) {
		t.Errorf("the data file held %d pets and the backup %d; want pets created after the backup", len(live), len(backedUp))
	}
}

// exportFile writes n pets, every other one keyed, in the export format,
// a line at a time, so that the test's own memory stays small: a child
// process starts with its parent's peak resident memory.
func exportFile(t *testing.T, path string, n int) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := bufio.NewWriter(f)
	b.WriteString(export.Header + "\n")
	created := time.Now().UTC().Format("2006-01-02T15:04:05.000Z")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(b, `{"id":%d,"name":"pet %d","categoryId":%d,"status":"available"`, i, i, i%100+1)
		if i%2 == 0 {
			fmt.Fprintf(b, `,"idempotencyKey":{"principal":"alice","key":"k%d","createdAt":"%s"}`, i, created)
		}
		b.WriteString("}\n")
	}
	if err := errors.Join(b.Flush(), f.Close()); err != nil {
		t.Fatal(err)
	}
}

// TestBackupKilled kills petstore backup with SIGKILL at random moments:
// the backup file is each time the previous one or a complete new one, and
// the data file stays whole.
func TestBackupKilled(t *testing.T) {
	const pets = 100_000
	bin, dir := buildServer(t), t.TempDir()
	exportFile(t, filepath.Join(dir, "seed.jsonl"), pets)
	mustRun(t, dir, bin, nil, "import", "seed.jsonl")
	p := startServerIn(t, dir, bin, "kill-key", nil)
	backup := filepath.Join(dir, "backup.db")
	start := time.Now()
	mustRun(t, dir, bin, nil, "backup", backup)
	took := time.Since(start)
	hash := func() [32]byte { return sha256.Sum256([]byte(readFile(t, backup))) }
	prev := hash()
	kinds := map[string]int{}
	for round := range 8 {
		cmd := newCommand(context.Background(), dir, bin, nil, "backup", backup)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// From the start of the process to past its usual end.
		time.Sleep(time.Duration(float64(took) * 1.5 * rand.Float64()))
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		if hash() == prev {
			kinds["the same bytes (the previous one, or a new one of the same data)"]++
			continue
		}
		if n := len(openPets(t, backup)); n != pets {
			t.Fatalf("round %d: the backup holds %d pets; want %d or the previous backup", round, n, pets)
		}
		kinds["complete"]++
		prev = hash() // opening it may have changed it
	}
	t.Logf("after each kill the backup was: %v (a backup took %v)", kinds, took)
	a := createPet(t, p.baseURL, "kill-key", "", petstore.NewPet{Name: "after", CategoryID: 1})
	if pet, _ := a.pet(); a.status != http.StatusCreated || pet.ID != pets+1 {
		t.Errorf("a create on the live file after the kills: %v; want pet %d", a, pets+1)
	}
}

// TestReadyzNoIDLeft: the server opens a PostgreSQL table that has issued
// the last ID there is, and /readyz answers 503 saying why.
func TestReadyzNoIDLeft(t *testing.T) {
	ctx, logger := context.Background(), slog.New(slog.DiscardHandler)
	schema, url := postgresSchema(t)
	_, closePool, err := openPostgresStore(ctx, url, "", "", true, logger) // makes the tables
	if err != nil {
		t.Fatal(err)
	}
	closePool()
	insert := "INSERT INTO " + pgx.Identifier{schema, "pets"}.Sanitize() +
		" (id, name, category_id) OVERRIDING SYSTEM VALUE VALUES (9223372036854775807, 'last', 1)"
	if _, err := postgresConn(t).Exec(ctx, insert); err != nil {
		t.Fatal(err)
	}
	s, closePool, err := openPostgresStore(ctx, url, "", "", true, logger)
	if err != nil {
		t.Fatalf("opening a table that holds the last ID: %v", err)
	}
	defer closePool()
	a := &admin{store: s, logger: logger, redact: func(s string) string { return s }}
	w := httptest.NewRecorder()
	a.ready(w, httptest.NewRequest(http.MethodGet, "/readyz", nil))
	if w.Code != http.StatusServiceUnavailable || !strings.Contains(w.Body.String(), "no pet ID left") {
		t.Errorf("/readyz: %d %s; want 503 saying that no pet ID is left", w.Code, w.Body)
	}
}

// TestMoveBetweenStores moves a data set from SQLite to PostgreSQL and back
// with export and import, with the key that the first server made: each
// export of what was imported is the same, a keyed retry replays the pet
// created before the move, and the next ID is above every imported one.
func TestMoveBetweenStores(t *testing.T) {
	_, pgURL := postgresSchema(t)
	pgEnv := []string{postgresURLVar + "=" + pgURL}
	bin, dir := buildServer(t), t.TempDir()

	p := startServerIn(t, dir, bin, "", nil) // makes a key, kept in petstore.db.key
	read := func(name string) string { return readFile(t, filepath.Join(dir, name)) }
	key := strings.TrimSpace(read(defaultDataFile + ".key"))
	principal := principalOf(t, key)
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
	for _, args := range [][]string{{"import", "seed.jsonl"}, {"export", "-o", "out.jsonl"}} {
		if rss := peak(args...); rss > bound {
			t.Errorf("%s peaked at %d MiB of resident memory; want it flat, under %d MiB", args[0], rss>>20, bound>>20)
		}
	}
}

// crashRounds is how many times TestServerCrash kills the server.
const crashRounds = 5

// TestServerCrash kills the server on its SQLite file with SIGKILL under
// concurrent creates, crashRounds times, and starts it again: every pet
// acknowledged with 201 is there as it was, no ID or name is there twice,
// and a keyed retry of an acknowledged create replays it.
func TestServerCrash(t *testing.T) {
	const key = "crash-key"
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, seed))
	bin := buildServer(t)
	dir := t.TempDir()

	acked := map[int64]loadCreate{} // every create answered 201, by ID
	p := startServerIn(t, dir, bin, key, nil)
	for round := range crashRounds {
		before := len(acked)
		killAfter := time.Duration(100+rng.IntN(600)) * time.Millisecond
		creates := crashLoad(t, p, key, round, killAfter)
		for _, c := range creates {
			if prev, ok := acked[c.pet.ID]; ok {
				t.Fatalf("round %d: ID %d acknowledged twice: %+v and %+v", round, c.pet.ID, prev, c)
			}
			acked[c.pet.ID] = c
		}

		p = startServerIn(t, dir, bin, key, nil)
		pets := allPets(t.Context(), t, p, key)
		stored := make(map[int64]petstore.Pet, len(pets))
		names := make(map[string]int64, len(pets))
		for i, pet := range pets {
			if i > 0 && pet.ID <= pets[i-1].ID {
				t.Fatalf("round %d: the list gives ID %d after %d", round, pet.ID, pets[i-1].ID)
			}
			if id, ok := names[pet.Name]; ok {
				t.Errorf("round %d: pets %d and %d are both %q: one create stored two pets", round, id, pet.ID, pet.Name)
			}
			names[pet.Name] = pet.ID
			stored[pet.ID] = pet
		}
		for id, c := range acked {
			if got, ok := stored[id]; !ok {
				t.Errorf("round %d: pet %d was acknowledged with 201 but is gone after the kill", round, id)
			} else if got != c.pet {
				t.Errorf("round %d: pet %d is %+v after the kill; acknowledged as %+v", round, id, got, c.pet)
			}
		}
		replays := 0
		for _, c := range creates {
			if c.key == "" {
				continue
			}
			a := createPet(t, p.baseURL, key, c.key, c.pet.NewPet)
			got, err := a.pet()
			if a.status != http.StatusCreated || !a.replayed() || err != nil || got != c.pet {
				t.Errorf("round %d: the keyed retry of pet %d after the kill: %v; want 201 replaying %+v", round, c.pet.ID, a, c.pet)
			}
			replays++
		}
		t.Logf("round %d: killed after %v; %d creates acknowledged (%d in all), %d pets stored, %d keyed retries replayed",
			round, killAfter, len(acked)-before, len(acked), len(pets), replays)
		if len(acked) == before {
			t.Errorf("round %d: no create was acknowledged before the kill", round)
		}
	}
}

// A loadCreate is a create that the server acknowledged with 201: the pet
// it answered with, its idempotency key ("" for none), and when.
type loadCreate struct {
	pet   petstore.Pet
	key   string
	acked time.Time
}

// createLoad sends creates to p from 16 goroutines until ctx ends, every
// other one with an idempotency key. A request that fails ends its
// goroutine, as an error of the test unless dies is set (the server is
// killed). It returns a channel closed at the first 201, and a function
// that waits for the goroutines and returns the creates acknowledged.
func createLoad(ctx context.Context, t *testing.T, p *serverProcess, key, prefix string, dies bool) (<-chan struct{}, func() []loadCreate) {
	const workers = 16
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: workers}}
	var (
		mu      sync.Mutex
		created []loadCreate
		wg      sync.WaitGroup
		first   = make(chan struct{})
		once    sync.Once
	)
	statuses := []petstore.Status{"", petstore.StatusAvailable, petstore.StatusPending, petstore.StatusSold}
	for w := range workers {
		wg.Go(func() {
			for i := 0; ctx.Err() == nil; i++ {
				name := fmt.Sprintf("%s-w%d-%d", prefix, w, i)
				pet := petstore.NewPet{Name: name, CategoryID: int64(1 + i%5), Status: statuses[(w+i)%len(statuses)]}
				idemKey := ""
				if i%2 == 0 {
					idemKey = "k-" + name
				}
				a, err := send(ctx, client, createRequest(p.baseURL, key, idemKey, pet))
				if err != nil {
					if !dies && ctx.Err() == nil {
						t.Errorf("create %s: %v", name, err)
					}
					return
				}
				got, err := a.pet()
				if a.status != http.StatusCreated || err != nil || got.NewPet != pet {
					t.Errorf("create %s: %v; want 201 with %+v", name, a, pet)
					return
				}
				mu.Lock()
				created = append(created, loadCreate{pet: got, key: idemKey, acked: time.Now()})
				mu.Unlock()
				once.Do(func() { close(first) })
			}
		})
	}
	return first, func() []loadCreate {
		wg.Wait()
		client.CloseIdleConnections()
		return created
	}
}

// crashLoad runs createLoad and kills p with SIGKILL killAfter after the
// first 201, and returns the creates acknowledged before it died.
func crashLoad(t *testing.T, p *serverProcess, key string, round int, killAfter time.Duration) []loadCreate {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	first, wait := createLoad(ctx, t, p, key, fmt.Sprint("r", round), true)
	select {
	case <-first:
	case <-time.After(30 * time.Second):
		t.Errorf("round %d: no create acknowledged within 30s", round)
	}
	time.Sleep(killAfter)
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-p.exited
	cancel()
	return wait()
}
