package sqlitestore_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/internal/testkit/sqltest"
	"github.com/petstore-go/petstore/sqlitestore"
)

// openPlain returns a pool of callers connections to a new file with the
// Store's pragmas and schema, for plain autocommit INSERTs.
func openPlain(b *testing.B, callers int) *sql.DB {
	b.Helper()
	db, err := sql.Open("sqlite", sqlitestore.WriterDSN(filepath.Join(b.TempDir(), "plain.db")))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	db.SetMaxOpenConns(callers)
	db.SetMaxIdleConns(callers)
	if _, err := db.Exec("PRAGMA journal_mode = WAL"); err != nil {
		b.Fatal(err)
	}
	schema, err := os.ReadFile("migrations/0001_create.sql")
	if err != nil {
		b.Fatal(err)
	}
	if _, err := db.Exec(string(schema)); err != nil {
		b.Fatal(err)
	}
	return db
}

// BenchmarkCreate measures creates per second at 1, 8 and 64 concurrent
// callers: Add without and with an idempotency key, and plain autocommit
// INSERTs of one row each (a prepared statement, on a pool of as many
// connections as callers) into a table of the same shape with the same
// pragmas, in the same run. add/insert and keyed/insert are the ratios.
func BenchmarkCreate(b *testing.B) {
	for _, callers := range []int{1, 8, 64} {
		b.Run(fmt.Sprintf("callers=%d", callers), func(b *testing.B) {
			// A file for each, so that none pays for the others' pages in
			// its checkpoints.
			s := open(b, filepath.Join(b.TempDir(), "pets.db"))
			sk := open(b, filepath.Join(b.TempDir(), "keyed.db"))
			plain := openPlain(b, callers)
			ctx := petstore.WithPrincipal(context.Background(), "0123456789abcdef")
			p := petstore.NewPet{Name: "Rex the third", CategoryID: 7, Status: petstore.StatusAvailable}
			add := func() error {
				_, _, err := s.Add(ctx, p, petstore.AddOptions{})
				return err
			}
			var keys atomic.Int64
			addKeyed := func() error {
				_, _, err := sk.Add(ctx, p, petstore.AddOptions{IdempotencyKey: fmt.Sprintf("key-%036d", keys.Add(1))})
				return err
			}
			stmt, err := plain.Prepare("INSERT INTO pets (name, category_id, status) VALUES (?, ?, NULLIF(?, ''))")
			if err != nil {
				b.Fatal(err)
			}
			defer stmt.Close()
			insert := func() error {
				_, err := stmt.Exec(p.Name, p.CategoryID, string(p.Status))
				return err
			}
			// In rounds of a tenth of b.N each, at least 16 creates per
			// caller, so that every caller stays busy.
			b.ResetTimer()
			spent := sqltest.Rounds(b, callers, max(b.N/10, 16*callers), add, insert, addKeyed)
			b.StopTimer()
			adds, inserts, keyed := spent[0], spent[1], spent[2]
			rate := func(d time.Duration) float64 { return float64(b.N) / d.Seconds() }
			b.ReportMetric(0, "ns/op")
			b.ReportMetric(rate(adds), "adds/s")
			b.ReportMetric(rate(keyed), "keyed-adds/s")
			b.ReportMetric(rate(inserts), "inserts/s")
			b.ReportMetric(rate(adds)/rate(inserts), "add/insert")
			b.ReportMetric(rate(keyed)/rate(inserts), "keyed/insert")
		})
	}
}

// BenchmarkReadUnderWrites measures Get and a List page of 20, from as many
// goroutines as GOMAXPROCS, in a file of 10,000 pets while 8 callers add
// pets without pause.
func BenchmarkReadUnderWrites(b *testing.B) {
	const pets = 10_000
	s := open(b, filepath.Join(b.TempDir(), "pets.db"))
	ctx := context.Background()
	p := petstore.NewPet{Name: "Rex the third", CategoryID: 7, Status: petstore.StatusAvailable}
	sqltest.Parallel(b, 64, pets, func(int) error {
		_, _, err := s.Add(ctx, p, petstore.AddOptions{})
		return err
	})
	for _, read := range []struct {
		name string
		f    func(id int64) error
	}{
		{"get", func(id int64) error {
			_, err := s.Get(ctx, id)
			return err
		}},
		{"list20", func(id int64) error {
			page, err := s.List(ctx, petstore.ListOptions{After: id - 1, Limit: 20})
			if err == nil && len(page) != 20 {
				err = fmt.Errorf("a page of %d pets, want 20", len(page))
			}
			return err
		}},
	} {
		b.Run(read.name, func(b *testing.B) {
			stop := make(chan struct{})
			var writes atomic.Int64
			var wg sync.WaitGroup
			for range 8 {
				wg.Go(func() {
					for {
						select {
						case <-stop:
							return
						default:
						}
						if _, _, err := s.Add(ctx, p, petstore.AddOptions{}); err != nil {
							b.Error(err)
							return
						}
						writes.Add(1)
					}
				})
			}
			start := time.Now()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := read.f(1 + rand.Int64N(pets-20)); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.StopTimer()
			close(stop)
			wg.Wait()
			b.ReportMetric(float64(writes.Load())/time.Since(start).Seconds(), "adds/s")
		})
	}
}

// BenchmarkKeyOnDisk measures what an idempotency key costs on disk: two
// files receive 20,000 pets each through Add, one with a key of 40
// characters per pet and a principal of 16, and the difference of their
// sizes, after a checkpoint, is divided by the number of keys.
func BenchmarkKeyOnDisk(b *testing.B) {
	const n = 20_000
	ctx := petstore.WithPrincipal(context.Background(), "0123456789abcdef")
	p := petstore.NewPet{Name: "Rex the third", CategoryID: 7, Status: petstore.StatusAvailable}
	size := func(keyed bool) int64 {
		path := filepath.Join(b.TempDir(), "pets.db")
		s := open(b, path)
		sqltest.Parallel(b, 64, n, func(i int) error {
			var opts petstore.AddOptions
			if keyed {
				opts.IdempotencyKey = fmt.Sprintf("key-%036d", i)
			}
			_, _, err := s.Add(ctx, p, opts)
			return err
		})
		db := rawDB(b, path)
		if _, err := db.Exec("PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
			b.Fatal(err)
		}
		var bytes int64
		if err := db.QueryRow("SELECT page_count * page_size FROM pragma_page_count, pragma_page_size").Scan(&bytes); err != nil {
			b.Fatal(err)
		}
		return bytes
	}
	for b.Loop() {
		plain, keyed := size(false), size(true)
		b.ReportMetric(float64(keyed-plain)/n, "B/key")
		b.ReportMetric(float64(plain)/n, "B/pet")
	}
}
