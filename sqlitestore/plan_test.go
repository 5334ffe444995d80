package sqlitestore_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/petstore-go/petstore/sqlitestore"
)

// TestPlans checks, with EXPLAIN QUERY PLAN, that every statement that reads
// rows finds them through an index, never by scanning a table, so that its
// cost does not grow with the number of pets or keys.
func TestPlans(t *testing.T) {
	path := newPath(t)
	open(t, path)
	db := rawDB(t, path)
	tests := []struct {
		stmt string
		args []any
		want []string
	}{
		{"get", []any{1}, []string{"SEARCH pets USING INTEGER PRIMARY KEY (rowid=?)"}},
		{"list", []any{0, 20}, []string{"SEARCH pets USING INTEGER PRIMARY KEY (rowid>?)"}},
		{"list by status", []any{"sold", 0, 20}, []string{"SEARCH pets USING INDEX pets_status_id (status=? AND id>?)"}},
		{"look up key", []any{"p", "k"}, []string{
			"SEARCH k USING PRIMARY KEY (principal=? AND key=?)",
			"SEARCH p USING INTEGER PRIMARY KEY (rowid=?)",
		}},
		{"delete key", []any{"p", "k"}, []string{"SEARCH pet_keys USING PRIMARY KEY (principal=? AND key=?)"}},
		{"prune keys", []any{0, 1000}, []string{
			"SEARCH pet_keys USING PRIMARY KEY (principal=? AND key=?)",
			"LIST SUBQUERY 2",
			"SEARCH pet_keys USING COVERING INDEX pet_keys_created_at (created_at<?)",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.stmt, func(t *testing.T) {
			rows, err := db.Query("EXPLAIN QUERY PLAN "+sqlitestore.Statements[tt.stmt], tt.args...)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			var got []string
			for rows.Next() {
				var id, parent, notused int
				var detail string
				if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
					t.Fatal(err)
				}
				got = append(got, strings.TrimSpace(detail))
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("plan of %s (-want +got):\n%s", tt.stmt, diff)
			}
		})
	}
}
