package pgstore_test

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/internal/testkit/sqltest"
	"github.com/petstore-go/petstore/pgstore"
)

// benchSchema holds the tables that the List benchmarks read. They are kept
// between runs, since seeding a million pets takes seconds; drop the schema
// to reclaim the space.
const benchSchema = "pgstore_bench"

// benchBaseline measures a SELECT 1 round trip on pool, the database's own
// latency as the store sees it, and stores its time per operation in *per.
func benchBaseline(pool *pgxpool.Pool, per *time.Duration) func(*testing.B) {
	return func(b *testing.B) {
		ctx := context.Background()
		var one int
		for b.Loop() {
			must(b, pool.QueryRow(ctx, "SELECT 1").Scan(&one))
		}
		*per = b.Elapsed() / time.Duration(b.N)
	}
}

// benchRatio reports the time per operation of b as a multiple of the
// baseline.
func benchRatio(b *testing.B, baseline time.Duration) {
	if baseline > 0 && b.N > 0 {
		b.ReportMetric(float64(b.Elapsed())/float64(b.N)/float64(baseline), "x-select1")
	}
}

// BenchmarkGet measures Get of an existing pet.
func BenchmarkGet(b *testing.B) {
	pool := pgPool(b)
	s := pgStore(b, pool)
	const n = 1000
	pgSeed(b, pool, s, n)
	var baseline time.Duration
	b.Run("baseline", benchBaseline(pool, &baseline))
	b.Run("Get", func(b *testing.B) {
		ctx := context.Background()
		i := 0
		for b.Loop() {
			_, err := s.Get(ctx, int64(i%n+1))
			must(b, err)
			i++
		}
		benchRatio(b, baseline)
	})
}

// BenchmarkAddRatio measures Add, and Add with a new idempotency key on
// every call, against plain autocommit INSERTs on the same pool of 16
// connections and the same table, from 1, 8 and 64 concurrent callers. The
// three take turns in rounds of 20 creates per caller (at least 50), each
// going first in turn, so that a load that changes during the run (the
// machine is shared) weighs on all three alike, and each makes b.N creates
// in all; ns/op covers one create of each. It reports the creates per
// second of each, and x-insert and keyed-x-insert, those of Add and of
// keyed Add over those of the INSERT.
func BenchmarkAddRatio(b *testing.B) {
	pool := pgPool(b, func(c *pgxpool.Config) { c.MaxConns = 16 })
	s := pgStore(b, pool)
	plain := "INSERT INTO " + s.Table() + " (name, category_id, status) VALUES ($1, $2, $3) RETURNING id"
	pet := petstore.NewPet{Name: "Rex", CategoryID: 1, Status: petstore.StatusAvailable}
	keyCtx := petstore.WithPrincipal(context.Background(), "key:3f9a1c0e2b7d")
	var seq atomic.Int64 // numbers the keys of every run
	kinds := []func() error{
		func() error {
			var id int64
			return pool.QueryRow(context.Background(), plain, pet.Name, pet.CategoryID, string(pet.Status)).Scan(&id)
		},
		func() error {
			_, _, err := s.Add(context.Background(), pet, petstore.AddOptions{})
			return err
		},
		func() error {
			key := fmt.Sprintf("ratio-%020d", seq.Add(1))
			_, replayed, err := s.Add(keyCtx, pet, petstore.AddOptions{IdempotencyKey: key})
			if err == nil && replayed {
				err = fmt.Errorf("Add with the new key %q was replayed", key)
			}
			return err
		},
	}
	for _, callers := range []int{1, 8, 64} {
		b.Run(fmt.Sprintf("callers=%d", callers), func(b *testing.B) {
			spent := sqltest.Rounds(b, callers, max(50, 20*callers), kinds...)
			if b.N == 0 || spent[1] == 0 || spent[2] == 0 {
				return
			}
			for k, name := range []string{"insert/s", "Add/s", "keyed/s"} {
				b.ReportMetric(float64(b.N)/spent[k].Seconds(), name)
			}
			b.ReportMetric(float64(spent[0])/float64(spent[1]), "x-insert")
			b.ReportMetric(float64(spent[0])/float64(spent[2]), "keyed-x-insert")
		})
	}
}

// benchTable returns a Store on a table of n pets in benchSchema, created
// and seeded by the first run that needs it and kept for the next ones.
func benchTable(b *testing.B, pool *pgxpool.Pool, n int, name string) *pgstore.Store {
	b.Helper()
	ctx := context.Background()
	s := pgMigrate(b, pgNew(b, pool, pgstore.WithSchema(benchSchema), pgstore.WithTable(name)))
	seeded := false
	must(b, pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		// One seeder at a time, if benchmarks run in several processes.
		var count int
		_, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtext($1))", s.Table())
		if err == nil {
			err = tx.QueryRow(ctx, "SELECT count(*) FROM "+s.Table()).Scan(&count)
		}
		if err != nil || count == n {
			return err
		}
		b.Logf("seeding %s with %d pets", s.Table(), n)
		if _, err := tx.Exec(ctx, "TRUNCATE "+s.Table()+" RESTART IDENTITY"); err != nil {
			return err
		}
		seeded = true
		_, err = tx.Exec(ctx, fmt.Sprintf(seedSQL, s.Table()), n)
		return err
	}))
	if seeded {
		// Statistics for the planner, and the visibility map, as a table
		// that autovacuum has visited would have them.
		pgExec(b, pool, "VACUUM ANALYZE "+s.Table())
	}
	return s
}

// BenchmarkList measures a page of 20 pets, unfiltered and filtered by
// status, in a table of 10 thousand pets and in one of a million, at
// cursors spread over the whole table. Keyset pagination keeps the cost of
// a page flat: the figures for the two sizes should match.
func BenchmarkList(b *testing.B) {
	pool := pgPool(b)
	var baseline time.Duration
	b.Run("baseline", benchBaseline(pool, &baseline))
	for _, size := range []struct {
		name string
		n    int
	}{{"10k", 10_000}, {"1M", 1_000_000}} {
		s := benchTable(b, pool, size.n, "pets_"+strings.ToLower(size.name))
		for _, filter := range []petstore.Status{"", petstore.StatusSold} {
			b.Run(fmt.Sprintf("rows=%s/status=%s", size.name, cmp.Or(filter, "any")), func(b *testing.B) {
				ctx := context.Background()
				i := 0
				for b.Loop() {
					// Cursors at 997 positions spread over the table, up
					// to the last full page of sold pets.
					after := int64(i%997) * int64(size.n-100) / 997
					pets, err := s.List(ctx, petstore.ListOptions{After: after, Limit: 20, Status: filter})
					must(b, err)
					if len(pets) != 20 {
						b.Fatalf("List after %d returned %d pets; want 20", after, len(pets))
					}
					i++
				}
				benchRatio(b, baseline)
			})
		}
	}
}
