package pgstore_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/pgstore"
)

// TestAddKeepsIDsInCommitOrder enforces the clause of the Store contract
// that pagination relies on: once List has returned a pet, no pet with a
// smaller ID appears later. It makes the race that an identity column alone
// loses happen every time: a trigger holds the first Add between drawing its
// ID and committing, while a second Add runs through another Store on
// another pool, as in another process: only the lock in the database, not
// the queue of one Store, can make it wait.
func TestAddKeepsIDsInCommitOrder(t *testing.T) {
	admin := pgPool(t)
	ctx := context.Background()
	schema := pgSchema(t, admin)
	s := pgMigrate(t, pgNew(t, admin, pgstore.WithSchema(schema)))
	other := pgNew(t, pgPool(t), pgstore.WithSchema(schema))
	fn := pgx.Identifier{schema, "slow_insert"}.Sanitize()
	if _, err := admin.Exec(ctx, fmt.Sprintf(`
CREATE FUNCTION %[1]s() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF NEW.name = 'slow' THEN
		PERFORM pg_sleep(0.5);
	END IF;
	RETURN NEW;
END
$$;
CREATE TRIGGER slow_insert AFTER INSERT ON %[2]s FOR EACH ROW EXECUTE FUNCTION %[1]s();`, fn, s.Table())); err != nil {
		t.Fatal(err)
	}

	slow := goAdd(ctx, s, "", "", petstore.NewPet{Name: "slow", CategoryID: 1})
	// The slow Add has drawn its ID and sleeps before its commit.
	pgAwait(t, admin, "the slow insert to sleep",
		`SELECT EXISTS (SELECT FROM pg_stat_activity WHERE wait_event = 'PgSleep' AND query LIKE '%' || $1 || '%')`,
		schema)

	fast := pgAdd(t, other, petstore.NewPet{Name: "fast", CategoryID: 1})
	seen := pgList(t, s, petstore.ListOptions{})
	if r := <-slow; r.err != nil {
		t.Fatal(r.err)
	}
	all := pgList(t, s, petstore.ListOptions{})
	maxSeen := int64(0)
	for _, p := range seen {
		maxSeen = max(maxSeen, p.ID)
	}
	for _, p := range all {
		if !slices.Contains(seen, p) && p.ID < maxSeen {
			t.Errorf("List showed pet %d, then pet %d appeared; IDs must grow in the order pets become visible", maxSeen, p.ID)
		}
	}
	if !slices.Contains(seen, fast) {
		t.Errorf("List after Add returned %v does not show it: %v", fast, seen)
	}
}
