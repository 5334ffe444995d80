package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/internal/testkit/sqltest"
	"github.com/petstore-go/petstore/pgstore"
)

// pgRole creates a role that may log in, with a name no other test uses,
// and returns its name and a pool that connects as it. When the test ends
// the pool is closed and the role dropped, with its privileges.
func pgRole(t *testing.T, admin *pgxpool.Pool) (string, *pgxpool.Pool) {
	t.Helper()
	role := uniqueName("pgstore_test_role_")
	pgExec(t, admin, "CREATE ROLE "+role+" LOGIN")
	t.Cleanup(func() {
		for _, stmt := range []string{"DROP OWNED BY " + role, "DROP ROLE " + role} {
			if _, err := admin.Exec(context.Background(), stmt); err != nil {
				t.Errorf("%s: %v", stmt, err)
			}
		}
	})
	pool := pgPool(t, func(c *pgxpool.Config) { c.ConnConfig.User = role })
	return role, pool
}

// grantServing gives role, through admin, what serving the pets table in
// schema needs, as the Migrate doc lists it.
func grantServing(t *testing.T, admin *pgxpool.Pool, schema, role string) {
	t.Helper()
	pgExec(t, admin, "GRANT USAGE ON SCHEMA "+schema+" TO "+role+"; GRANT SELECT, INSERT ON "+schema+".pets TO "+role+
		"; GRANT SELECT, INSERT, DELETE ON "+schema+".pets_keys TO "+role+"; GRANT SELECT ON "+schema+".pets_migrations TO "+role)
}

// TestCheckServingRole runs a Store as a role that holds exactly the
// privileges that the Migrate doc lists for serving: Check passes, Migrate
// changes nothing, keyed and unkeyed creates work and expired keys are
// pruned. Then it revokes each privilege in turn, and checks that Check
// names the GRANT that gives it back.
func TestCheckServingRole(t *testing.T) {
	admin := pgPool(t)
	ctx := context.Background()
	schema := pgMigratedSchema(t, admin)
	role, pool := pgRole(t, admin)
	grantServing(t, admin, schema, role)
	clock := sqltest.NewClock()
	s := pgNew(t, pool, pgstore.WithSchema(schema), pgstore.WithClock(clock.Now))
	if err := s.Check(ctx); err != nil {
		t.Fatalf("Check: %v", err)
	}
	if err := s.Migrate(ctx); err != nil {
		t.Fatalf("Migrate of tables already at the version needed, as a role that may not create: %v", err)
	}
	current, needed, err := s.SchemaVersion(ctx)
	if err != nil || current != needed || needed < 3 {
		t.Fatalf("SchemaVersion = %d, %d, %v; want equal versions, at least 3", current, needed, err)
	}
	first, _, err := s.Add(ctx, petstore.NewPet{Name: "Rex", CategoryID: 1}, petstore.AddOptions{IdempotencyKey: "k1"})
	if err != nil {
		t.Fatalf("keyed Add: %v", err)
	}
	again, replayed, err := s.Add(ctx, petstore.NewPet{Name: "Rex", CategoryID: 1}, petstore.AddOptions{IdempotencyKey: "k1"})
	if err != nil || !replayed || again.ID != first.ID {
		t.Fatalf("keyed Add again = %v, %v, %v; want pet %d replayed", again, replayed, err, first.ID)
	}
	pgAdd(t, s, petstore.NewPet{Name: "Tom", CategoryID: 2}) // unkeyed
	// Past the retention, the next create starts a pass that forgets k1.
	clock.Advance(petstore.MinKeyRetention + time.Hour)
	eventually(t, "the serving role to delete the expired key", func() bool { return s.PrunedKeys() > 0 || addAnother(t, s) })

	for _, privilege := range []string{"USAGE ON SCHEMA %s", "INSERT ON %s.pets", "SELECT ON %s.pets",
		"DELETE ON %s.pets_keys", "INSERT ON %s.pets_keys", "SELECT ON %s.pets_migrations"} {
		grant := fmt.Sprintf(privilege, schema)
		t.Run("REVOKE "+fmt.Sprintf(privilege, "schema"), func(t *testing.T) {
			pgExec(t, admin, "REVOKE "+grant+" FROM "+role)
			defer grantServing(t, admin, schema, role)
			err := s.Check(ctx)
			if !errors.Is(err, pgstore.ErrPrivilege) {
				t.Fatalf("Check = %v; want an error wrapping ErrPrivilege", err)
			}
			if want := "run: GRANT " + grant + " TO " + role + ";"; !strings.HasSuffix(err.Error(), want) {
				t.Errorf("Check = %v\nwant it to end with %s", err, want)
			}
		})
	}
	if err := s.Check(ctx); err != nil {
		t.Errorf("Check with every grant back: %v", err)
	}
}

// TestCheckNotMigrated checks Check and SchemaVersion before Migrate, and
// Migrate's error for a role that may not create the tables.
func TestCheckNotMigrated(t *testing.T) {
	admin := pgPool(t)
	ctx := context.Background()
	schema := pgSchema(t, admin)
	s := pgNew(t, admin, pgstore.WithSchema(schema))
	err := s.Check(ctx)
	if !errors.Is(err, pgstore.ErrNotMigrated) || !strings.Contains(err.Error(), "does not exist, so neither does the table") {
		t.Errorf("Check without the schema = %v; want ErrNotMigrated saying to run Migrate", err)
	}
	pgExec(t, admin, "CREATE SCHEMA "+schema)
	err = s.Check(ctx)
	if !errors.Is(err, pgstore.ErrNotMigrated) || !strings.Contains(err.Error(), "run Migrate") {
		t.Errorf("Check without the tables = %v; want ErrNotMigrated saying to run Migrate", err)
	}
	if cur, need, err := s.SchemaVersion(ctx); err != nil || cur != 0 || need < 3 {
		t.Errorf("SchemaVersion before Migrate = %d, %d, %v; want 0, 3 or more, nil", cur, need, err)
	}

	role, pool := pgRole(t, admin)
	pgExec(t, admin, "GRANT USAGE ON SCHEMA "+schema+" TO "+role)
	rs := pgNew(t, pool, pgstore.WithSchema(schema))
	err = rs.Migrate(ctx)
	if err == nil || !strings.Contains(err.Error(), "run it as the tables' owner") {
		t.Errorf("Migrate as a role that may not create = %v; want an error saying to run it as the owner", err)
	}

	if err := pgMigrate(t, s).Check(ctx); err != nil {
		t.Errorf("Check after Migrate: %v", err)
	}
	// A version missing, as when this release is newer than the tables.
	pgExec(t, admin, "DELETE FROM "+pgx.Identifier{schema, "pets_migrations"}.Sanitize()+" WHERE version = 3")
	err = s.Check(ctx)
	if !errors.Is(err, pgstore.ErrNotMigrated) || !strings.Contains(err.Error(), "is at schema version 2 and this release needs version 3") {
		t.Errorf("Check with version 3 missing = %v; want ErrNotMigrated naming versions 2 and 3", err)
	}
}

func TestSplitSearchPath(t *testing.T) {
	for _, tt := range []struct {
		searchPath string
		want       []string
	}{
		{"", nil},
		{"nosuchschema", []string{"nosuchschema"}},
		{`"$user", public`, []string{"$user", "public"}},
		{`Shop, "Mixed Case", "with ""quote"""`, []string{"shop", "Mixed Case", `with "quote"`}},
		{`a,,b`, []string{"a", "b"}},
	} {
		if diff := cmp.Diff(tt.want, pgstore.SplitSearchPath(tt.searchPath)); diff != "" {
			t.Errorf("splitSearchPath(%q) (-want +got):\n%s", tt.searchPath, diff)
		}
	}
}

func TestSQLIdentifier(t *testing.T) {
	for name, want := range map[string]string{
		"shop": "shop", "shop_2": "shop_2", "Shop": `"Shop"`, "two words": `"two words"`, `a"b`: `"a""b"`, "2shop": `"2shop"`,
	} {
		if got := pgstore.SQLIdentifier(name); got != want {
			t.Errorf("sqlIdentifier(%q) = %s, want %s", name, got, want)
		}
	}
}
