package pgstore_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/petstore-go/petstore"
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
			if err := pool.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil {
				b.Fatal(err)
			}
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
			if _, err := s.Get(ctx, int64(i%n+1)); err != nil {
				b.Fatal(err)
			}
			i++
		}
		benchRatio(b, baseline)
	})
}

// benchCreates runs b.N calls of create, from callers goroutines at once,
// and reports and returns the creates per second.
func benchCreates(b *testing.B, callers int, create func(ctx context.Context, caller int) error) float64 {
	ctx := context.Background()
	var (
		next atomic.Int64
		wg   sync.WaitGroup
	)
	b.ResetTimer()
	for c := range callers {
		wg.Go(func() {
			for next.Add(1) <= int64(b.N) {
				if err := create(ctx, c); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	rate := float64(b.N) / b.Elapsed().Seconds()
	b.ReportMetric(rate, "creates/s")
	return rate
}

// benchAddSQL returns the statements that BenchmarkAdd sets beside Add on
// the table of s: a plain INSERT, in its own implicit transaction with no
// lock, and one row inserted under the advisory lock that Add takes, as
// Add did before it committed concurrent calls together.
func benchAddSQL(s *pgstore.Store) (plain, locked string) {
	plain = "INSERT INTO " + s.Table() + " (name, category_id, status) VALUES ($1, $2, $3) RETURNING id"
	locked = `WITH serial AS (SELECT pg_advisory_xact_lock(x'70657401'::int4, $4::regclass::oid::int4))
INSERT INTO ` + s.Table() + ` (name, category_id, status) SELECT $1::text, $2::bigint, nullif($3::text, '') FROM serial
RETURNING id`
	return plain, locked
}

// BenchmarkAdd measures creates per second from 1, 8 and 64 concurrent
// callers on one pool of 16 connections, and from 64 callers on two pools
// and two Stores sharing one table, as two processes would. In each case
// it measures, on the same pools and table in the same run, a plain
// autocommit INSERT (insert), the same row inserted under the advisory
// lock, one transaction per pet, as Add did before it batched (locked),
// Add, and Add with a new idempotency key on every call, 26 characters
// like the Go client's, under a principal (AddKeyed). Add and AddKeyed
// report x-insert, their creates per second over those of the plain
// INSERT, and Add x-locked, over those of the locked INSERT. AddKeyed also
// reports key-B, the bytes that the keys table and its indexes take per
// key stored (pg_total_relation_size over the count of rows).
func BenchmarkAdd(b *testing.B) {
	pool := pgPool(b, func(c *pgxpool.Config) { c.MaxConns = 16 })
	other := pgPool(b, func(c *pgxpool.Config) { c.MaxConns = 16 })
	s := pgStore(b, pool)
	s2, err := pgstore.New(other, pgstore.WithSchema(strings.Split(s.Table(), `"`)[1]))
	if err != nil {
		b.Fatal(err)
	}
	plain, locked := benchAddSQL(s)
	keys := strings.TrimSuffix(s.Table(), `"`) + `_keys"`
	var seq atomic.Int64 // numbers the keys of every run
	pet := petstore.NewPet{Name: "Rex", CategoryID: 1, Status: petstore.StatusAvailable}
	for _, c := range []struct {
		name    string
		callers int
		pools   []*pgxpool.Pool
		stores  []*pgstore.Store
	}{
		{"callers=1", 1, []*pgxpool.Pool{pool}, []*pgstore.Store{s}},
		{"callers=8", 8, []*pgxpool.Pool{pool}, []*pgstore.Store{s}},
		{"callers=64", 64, []*pgxpool.Pool{pool}, []*pgstore.Store{s}},
		{"procs=2/callers=64", 64, []*pgxpool.Pool{pool, other}, []*pgstore.Store{s, s2}},
	} {
		b.Run(c.name, func(b *testing.B) {
			var insertRate, lockedRate float64
			b.Run("insert", func(b *testing.B) {
				insertRate = benchCreates(b, c.callers, func(ctx context.Context, caller int) error {
					var id int64
					return c.pools[caller%len(c.pools)].QueryRow(ctx, plain, pet.Name, pet.CategoryID, string(pet.Status)).Scan(&id)
				})
			})
			b.Run("locked", func(b *testing.B) {
				lockedRate = benchCreates(b, c.callers, func(ctx context.Context, caller int) error {
					var id int64
					return c.pools[caller%len(c.pools)].QueryRow(ctx, locked, pet.Name, pet.CategoryID, string(pet.Status), s.Table()).Scan(&id)
				})
			})
			b.Run("Add", func(b *testing.B) {
				rate := benchCreates(b, c.callers, func(ctx context.Context, caller int) error {
					_, _, err := c.stores[caller%len(c.stores)].Add(ctx, pet, petstore.AddOptions{})
					return err
				})
				if insertRate > 0 && lockedRate > 0 {
					b.ReportMetric(rate/insertRate, "x-insert")
					b.ReportMetric(rate/lockedRate, "x-locked")
				}
			})
			b.Run("AddKeyed", func(b *testing.B) {
				ctx := petstore.WithPrincipal(context.Background(), "key:3f9a1c0e2b7d")
				rate := benchCreates(b, c.callers, func(_ context.Context, caller int) error {
					key := fmt.Sprintf("%s-%020d", c.name[:min(5, len(c.name))], seq.Add(1))
					_, replayed, err := c.stores[caller%len(c.stores)].Add(ctx, pet, petstore.AddOptions{IdempotencyKey: key})
					if err == nil && replayed {
						err = fmt.Errorf("Add with the new key %q was replayed", key)
					}
					return err
				})
				if insertRate > 0 {
					b.ReportMetric(rate/insertRate, "x-insert")
				}
				var size float64
				err := pool.QueryRow(context.Background(), `SELECT pg_total_relation_size($1::regclass)::float8 / greatest(count(*), 1) FROM `+keys,
					keys).Scan(&size)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(size, "key-B")
			})
		})
	}
}

// BenchmarkAddRatio measures Add, and Add with a new idempotency key on
// every call, against plain autocommit INSERTs on the same pool of 16
// connections and the same table, from 1, 8 and 64 concurrent callers. The
// three take turns in rounds of 20 creates per caller (at least 50), each
// going first in turn, so that a load that changes during the run (the
// machine is shared) weighs on all three alike, and each makes b.N creates
// in all; ns/op covers one create of
// each. It reports the creates per second of each, and x-insert and
// keyed-x-insert, those of Add and of keyed Add over those of the INSERT.
func BenchmarkAddRatio(b *testing.B) {
	pool := pgPool(b, func(c *pgxpool.Config) { c.MaxConns = 16 })
	s := pgStore(b, pool)
	plain, _ := benchAddSQL(s)
	pet := petstore.NewPet{Name: "Rex", CategoryID: 1, Status: petstore.StatusAvailable}
	keyCtx := petstore.WithPrincipal(context.Background(), "key:3f9a1c0e2b7d")
	var seq atomic.Int64 // numbers the keys of every run
	kinds := []func(ctx context.Context) error{
		func(ctx context.Context) error {
			var id int64
			return pool.QueryRow(ctx, plain, pet.Name, pet.CategoryID, string(pet.Status)).Scan(&id)
		},
		func(ctx context.Context) error {
			_, _, err := s.Add(ctx, pet, petstore.AddOptions{})
			return err
		},
		func(context.Context) error {
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
			round := max(50, 20*callers)
			var spent [3]time.Duration
			for r, done := 0, 0; done < b.N; r++ {
				n := min(round, b.N-done)
				for j := range kinds {
					k := (r + j) % len(kinds) // each goes first in turn
					start := time.Now()
					benchRound(b, callers, n, kinds[k])
					spent[k] += time.Since(start)
				}
				done += n
			}
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

// benchRound makes n calls of create from callers goroutines at once.
func benchRound(b *testing.B, callers, n int, create func(ctx context.Context) error) {
	var (
		next atomic.Int64
		wg   sync.WaitGroup
	)
	ctx := context.Background()
	for range min(callers, n) {
		wg.Go(func() {
			for next.Add(1) <= int64(n) {
				if err := create(ctx); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// benchTable returns a Store on a table of n pets in benchSchema, created
// and seeded by the first run that needs it and kept for the next ones.
func benchTable(b *testing.B, pool *pgxpool.Pool, n int, name string) *pgstore.Store {
	b.Helper()
	ctx := context.Background()
	s, err := pgstore.New(pool, pgstore.WithSchema(benchSchema), pgstore.WithTable(name))
	if err != nil {
		b.Fatal(err)
	}
	if err := s.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	seeded := false
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		// One seeder at a time, if benchmarks run in several processes.
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtext($1))", s.Table()); err != nil {
			return err
		}
		var count int
		if err := tx.QueryRow(ctx, "SELECT count(*) FROM "+s.Table()).Scan(&count); err != nil {
			return err
		}
		if count == n {
			return nil
		}
		b.Logf("seeding %s with %d pets", s.Table(), n)
		if _, err := tx.Exec(ctx, "TRUNCATE "+s.Table()+" RESTART IDENTITY"); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO `+s.Table()+` (name, category_id, status)
SELECT 'pet ' || g, g % 100 + 1, (ARRAY['available', 'pending', 'sold', NULL])[g % 4 + 1]
FROM generate_series(1, $1::bigint) AS g`, n)
		seeded = true
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	if seeded {
		// Statistics for the planner, and the visibility map, as a table
		// that autovacuum has visited would have them.
		if _, err := pool.Exec(ctx, "VACUUM ANALYZE "+s.Table()); err != nil {
			b.Fatal(err)
		}
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
			name := fmt.Sprintf("rows=%s/status=%s", size.name, filter)
			if filter == "" {
				name = fmt.Sprintf("rows=%s/status=any", size.name)
			}
			b.Run(name, func(b *testing.B) {
				ctx := context.Background()
				i := 0
				for b.Loop() {
					// Cursors at 997 positions spread over the table, up
					// to the last full page of sold pets.
					after := int64(i%997) * int64(size.n-100) / 997
					pets, err := s.List(ctx, petstore.ListOptions{After: after, Limit: 20, Status: filter})
					if err != nil {
						b.Fatal(err)
					}
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
