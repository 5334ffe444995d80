package pgstore_test

import (
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/petstore-go/petstore/pgstore"
)

// pgLazyPool returns a pool that has not connected anywhere: pgxpool
// connects on first use.
func pgLazyPool(t *testing.T) *pgxpool.Pool {
	t.Helper()
	return urlPool(t, "postgres://nobody@127.0.0.1:1/none")
}

// TestNew checks the table that New quotes from its options, and that it
// refuses invalid options, each with an error that says how to fix it.
func TestNew(t *testing.T) {
	pool := pgLazyPool(t)
	tests := []struct {
		name string
		pool *pgxpool.Pool
		opts []pgstore.Option
		want string // the table, or in the error when err is set
		err  bool
	}{
		{"default", pool, nil, `"pets"`, false},
		{"table", pool, []pgstore.Option{pgstore.WithTable("Animals")}, `"Animals"`, false},
		{"schema", pool, []pgstore.Option{pgstore.WithSchema("shop")}, `"shop"."pets"`, false},
		{"quotes and dots", pool, []pgstore.Option{pgstore.WithSchema(`a"b`), pgstore.WithTable("c.d")}, `"a""b"."c.d"`, false},
		{"longest table", pool, []pgstore.Option{pgstore.WithTable(strings.Repeat("t", 49))}, `"` + strings.Repeat("t", 49) + `"`, false},
		{"no pool", nil, nil, "the pool is nil; open one with pgxpool.New", true},
		{"empty table", pool, []pgstore.Option{pgstore.WithTable("")}, "WithTable: the table name is empty", true},
		{"table too long", pool, []pgstore.Option{pgstore.WithTable(strings.Repeat("t", 50))}, "the limit is 49", true},
		{"table with NUL", pool, []pgstore.Option{pgstore.WithTable("pe\x00ts")}, "NUL", true},
		{"table not UTF-8", pool, []pgstore.Option{pgstore.WithTable("pe\xfftz")}, "UTF-8", true},
		{"schema too long", pool, []pgstore.Option{pgstore.WithSchema(strings.Repeat("s", 64))}, "the limit is 63", true},
		{"schema with NUL", pool, []pgstore.Option{pgstore.WithSchema("a\x00")}, "WithSchema: the schema name \"a\\x00\" contains a NUL byte", true},
		{"zero batch", pool, []pgstore.Option{pgstore.WithMaxBatch(0)}, "WithMaxBatch: 0 is not positive", true},
		{"negative batch", pool, []pgstore.Option{pgstore.WithMaxBatch(-1)}, "WithMaxBatch: -1", true},
		{"nil replica", pool, []pgstore.Option{pgstore.WithReplicas(pool, nil)}, "WithReplicas: pool 2 of 2 is nil; open each with pgxpool.New", true},
		{"negative replica wait", pool, []pgstore.Option{pgstore.WithReplicaWait(-time.Millisecond)}, "WithReplicaWait: -1ms is negative; use a wait such as 5ms, or 0 not to wait", true},
		{"max lag within a check", pool, []pgstore.Option{pgstore.WithReplicaMaxLag(pgstore.ReplicaCheckInterval)},
			"WithReplicaMaxLag: 100ms is not longer than ReplicaCheckInterval (100ms); use a bound such as 1s", true},
		{"listen URL that does not parse", pool, []pgstore.Option{pgstore.WithListenURL("postgres://[::1")}, "WithListenURL: ", true},
		{"every mistake", nil, []pgstore.Option{pgstore.WithTable(""), pgstore.WithMaxBatch(0)}, "pgxpool.New\nWithTable: the table name is empty; give a name such as \"pets\"\nWithMaxBatch", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := pgstore.New(tt.pool, tt.opts...)
			switch {
			case !tt.err && err != nil:
				t.Fatalf("New: %v", err)
			case !tt.err && s.Table() != tt.want:
				t.Errorf("Table() = %s; want %s", s.Table(), tt.want)
			case tt.err && err == nil:
				t.Fatalf("New = %v, nil; want an error", s)
			case tt.err && !strings.Contains(err.Error(), tt.want):
				t.Errorf("New error = %q; want it to contain %q", err, tt.want)
			}
		})
	}
}

// TestListenURLHidesPassword checks that a listen URL that does not parse is
// refused with why, and without any part of its password, which pgx's own
// message shows when it cannot tell where the password ends.
func TestListenURLHidesPassword(t *testing.T) {
	_, err := pgstore.New(pgLazyPool(t), pgstore.WithListenURL("postgres://app:SECRET@SECRET@127.0.0.1:notaport/shop"))
	switch {
	case err == nil:
		t.Fatal("New with a listen URL that does not parse: no error")
	case strings.Contains(err.Error(), "SECRET"):
		t.Errorf("New error = %q; it shows the password", err)
	case !strings.Contains(err.Error(), "WithListenURL: ") || !strings.Contains(err.Error(), "port"):
		t.Errorf("New error = %q; want it to name WithListenURL and the invalid port", err)
	}
}
