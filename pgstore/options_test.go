package pgstore_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/pgstore"
)

// pgLazyPool returns a pool that has not connected anywhere: pgxpool
// connects on first use.
func pgLazyPool(t *testing.T) *pgxpool.Pool {
	t.Helper()
	return urlPool(t, "postgres://nobody@127.0.0.1:1/none")
}

func TestNewRejectsInvalidOptions(t *testing.T) {
	pool := pgLazyPool(t)
	tests := []struct {
		name string
		pool *pgxpool.Pool
		opts []pgstore.Option
		want string // in the error
	}{
		{"no pool", nil, nil, "the pool is nil; open one with pgxpool.New"},
		{"empty table", pool, []pgstore.Option{pgstore.WithTable("")}, "WithTable: the table name is empty"},
		{"table too long", pool, []pgstore.Option{pgstore.WithTable(strings.Repeat("t", 50))}, "the limit is 49"},
		{"table with NUL", pool, []pgstore.Option{pgstore.WithTable("pe\x00ts")}, "NUL"},
		{"table not UTF-8", pool, []pgstore.Option{pgstore.WithTable("pe\xfftz")}, "UTF-8"},
		{"schema too long", pool, []pgstore.Option{pgstore.WithSchema(strings.Repeat("s", 64))}, "the limit is 63"},
		{"schema with NUL", pool, []pgstore.Option{pgstore.WithSchema("a\x00")}, "WithSchema: the schema name \"a\\x00\" contains a NUL byte"},
		{"zero batch", pool, []pgstore.Option{pgstore.WithMaxBatch(0)}, "WithMaxBatch: 0 is not positive"},
		{"negative batch", pool, []pgstore.Option{pgstore.WithMaxBatch(-1)}, "WithMaxBatch: -1"},
		{"nil replica", pool, []pgstore.Option{pgstore.WithReplicas(pool, nil)}, "WithReplicas: pool 2 of 2 is nil; open each with pgxpool.New"},
		{"negative replica wait", pool, []pgstore.Option{pgstore.WithReplicaWait(-time.Millisecond)}, "WithReplicaWait: -1ms is negative; use a wait such as 5ms, or 0 not to wait"},
		{"max lag within a check", pool, []pgstore.Option{pgstore.WithReplicaMaxLag(pgstore.ReplicaCheckInterval)},
			"WithReplicaMaxLag: 100ms is not longer than ReplicaCheckInterval (100ms); use a bound such as 1s"},
		{"every mistake", nil, []pgstore.Option{pgstore.WithTable(""), pgstore.WithMaxBatch(0)}, "pgxpool.New\nWithTable: the table name is empty; give a name such as \"pets\"\nWithMaxBatch"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := pgstore.New(tt.pool, tt.opts...)
			if err == nil {
				t.Fatalf("New = %v, nil; want an error", s)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("New error = %q; want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestNewQuotesNames(t *testing.T) {
	pool := pgLazyPool(t)
	tests := []struct {
		name string
		opts []pgstore.Option
		want string
	}{
		{"default", nil, `"pets"`},
		{"table", []pgstore.Option{pgstore.WithTable("Animals")}, `"Animals"`},
		{"schema", []pgstore.Option{pgstore.WithSchema("shop")}, `"shop"."pets"`},
		{"quotes and dots", []pgstore.Option{pgstore.WithSchema(`a"b`), pgstore.WithTable("c.d")}, `"a""b"."c.d"`},
		{"longest table", []pgstore.Option{pgstore.WithTable(strings.Repeat("t", 49))}, `"` + strings.Repeat("t", 49) + `"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := pgNew(t, pool, tt.opts...)
			if diff := cmp.Diff(tt.want, s.Table()); diff != "" {
				t.Errorf("Table() (-want +got):\n%s", diff)
			}
		})
	}
}

// TestUnusualNames runs a store whose schema and table names need quoting,
// so that a name is never read as SQL.
func TestUnusualNames(t *testing.T) {
	pool := pgPool(t)
	ctx := context.Background()
	s := pgStore(t, pool, pgstore.WithTable(`Pets "x"; DROP TABLE pets; --`))
	added := pgAdd(t, s, petstore.NewPet{Name: "Rex", CategoryID: 1, Status: petstore.StatusSold})
	got, err := s.List(ctx, petstore.ListOptions{Status: petstore.StatusSold})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]petstore.Pet{added}, got); diff != "" {
		t.Errorf("List (-want +got):\n%s", diff)
	}
}
