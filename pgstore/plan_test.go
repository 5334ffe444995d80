package pgstore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/petstore-go/petstore"
)

// planNode is a node of the JSON output of EXPLAIN.
type planNode struct {
	NodeType  string     `json:"Node Type"`
	IndexName string     `json:"Index Name"`
	Plans     []planNode `json:"Plans"`
}

// scans returns "Node Type" or "Node Type using Index Name" for every node
// of the plan, depth first.
func (n planNode) scans() []string {
	s := n.NodeType
	if n.IndexName != "" {
		s += " using " + n.IndexName
	}
	out := []string{s}
	for _, c := range n.Plans {
		out = append(out, c.scans()...)
	}
	return out
}

// planLiteral writes an argument of the store's queries as an SQL literal.
func planLiteral(t *testing.T, v any) string {
	switch v := v.(type) {
	case nil:
		return "NULL"
	case int64:
		return strconv.FormatInt(v, 10)
	case int:
		return strconv.Itoa(v)
	case string:
		return "'" + strings.ReplaceAll(v, "'", "''") + "'"
	}
	t.Fatalf("argument %v of type %T", v, v)
	return ""
}

// planExplain returns the plan that the server makes for sql and args:
// with generic, the plan it makes once it stops looking at the arguments, as
// it may for a statement that pgx has prepared and used several times.
func planExplain(t *testing.T, pool *pgxpool.Pool, sql string, args []any, generic bool) []string {
	t.Helper()
	ctx := context.Background()
	conn, err := pool.Acquire(ctx)
	must(t, err)
	defer conn.Release()
	var out []byte
	if !generic {
		err = conn.QueryRow(ctx, "EXPLAIN (FORMAT JSON) "+sql, args...).Scan(&out)
	} else {
		literals := make([]string, len(args))
		for i, a := range args {
			literals[i] = planLiteral(t, a)
		}
		_, err = conn.Exec(ctx, "SET plan_cache_mode = force_generic_plan; PREPARE plan_q AS "+sql)
		if err == nil {
			err = conn.QueryRow(ctx, "EXPLAIN (FORMAT JSON) EXECUTE plan_q("+strings.Join(literals, ", ")+")").Scan(&out)
		}
		if _, resetErr := conn.Exec(ctx, "DEALLOCATE plan_q; RESET plan_cache_mode"); resetErr != nil && err == nil {
			err = resetErr
		}
	}
	if err != nil {
		t.Fatalf("explaining %s: %v", sql, err)
	}
	var plans []struct{ Plan planNode }
	if err := json.Unmarshal(out, &plans); err != nil || len(plans) != 1 {
		t.Fatalf("EXPLAIN output %s: %v", out, err)
	}
	return plans[0].Plan.scans()
}

// TestListIsIndexRangeScan checks that every List, filtered or not, and Get
// are served by a range scan of an index, in the order of the index, with no
// sequential scan and no sort: their cost then depends on the page size,
// not on the number of pets. The table holds enough pets, with statistics,
// for the planner to choose between plans as it would in production.
func TestListIsIndexRangeScan(t *testing.T) {
	a := addSetup(t)
	const n = 20000
	pgSeed(t, a.admin, a.s, n)
	// The index names that Migrate chose, as EXPLAIN shows them.
	pkey, statusIndex := "Index Scan using pets_pkey", "Index Scan using pets_status_id_idx"
	type call struct {
		name string
		opts *petstore.ListOptions // nil for a Get
		want []string              // the plan's nodes
	}
	calls := []call{{"Get", nil, []string{pkey}}}
	for _, after := range []int64{0, n / 2, n - 30} {
		calls = append(calls,
			call{fmt.Sprintf("List after %d", after), &petstore.ListOptions{After: after, Limit: 20}, []string{"Limit", pkey}},
			call{fmt.Sprintf("List sold after %d", after), &petstore.ListOptions{After: after, Limit: 20, Status: petstore.StatusSold}, []string{"Limit", statusIndex}})
	}
	// Without a cap the LIMIT is bound to NULL, which a custom plan drops
	// and a generic plan keeps: either way, the pets are read in the
	// index's order.
	for _, after := range []int64{0, n - 30} {
		calls = append(calls,
			call{fmt.Sprintf("List all after %d", after), &petstore.ListOptions{After: after}, []string{pkey}},
			call{fmt.Sprintf("List all sold after %d", after), &petstore.ListOptions{After: after, Status: petstore.StatusSold}, []string{statusIndex}})
	}
	for _, c := range calls {
		t.Run(c.name, func(t *testing.T) {
			var err error
			if c.opts == nil {
				_, err = a.s.Get(context.Background(), n/2)
			} else {
				_, err = a.s.List(context.Background(), *c.opts)
			}
			must(t, err)
			sql, args := a.tracer.lastQuery()
			for _, generic := range []bool{false, true} {
				// A Limit node without a limit does nothing.
				got := slices.DeleteFunc(planExplain(t, a.admin, sql, args, generic), func(node string) bool {
					return node == "Limit" && slices.Contains(args, nil)
				})
				if diff := cmp.Diff(c.want, got); diff != "" {
					t.Errorf("plan of %s (generic %v) (-want +got):\n%s", sql, generic, diff)
				}
			}
		})
	}
}
