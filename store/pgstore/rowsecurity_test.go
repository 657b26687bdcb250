package pgstore

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// newRole creates a login role of the test's own with the privileges a
// relay needs on store's schema, and returns a store over a pool that
// connects as it. The role is dropped when the test ends.
func newRole(t *testing.T, s *Store) (string, *Store) {
	t.Helper()
	ctx := t.Context()
	role := "reliar_rls_" + randomSuffix()
	q := pgx.Identifier{role}.Sanitize()
	if _, err := sharedPool.Exec(ctx, `CREATE ROLE `+q+` LOGIN`); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := sharedPool.Exec(ctx, `DROP OWNED BY `+q+`; DROP ROLE `+q); err != nil {
			t.Errorf("drop role %s: %v", role, err)
		}
	})
	if _, err := sharedPool.Exec(ctx, `GRANT USAGE ON SCHEMA `+s.n.quoted+` TO `+q+`;
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA `+s.n.quoted+` TO `+q); err != nil {
		t.Fatal(err)
	}
	cfg, err := pgxpool.ParseConfig(testDSN)
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.User = role
	cfg.MaxConns = 2
	cfg.ConnConfig.RuntimeParams["search_path"] = ""
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	rs, err := New(ctx, pool, WithSchema(s.n.schema), WithLogger(quietLogger()))
	if err != nil {
		t.Fatal(err)
	}
	return role, rs
}

// RowSecurity tells the policies that hide rows from the store's role from
// those that do not, on a role created for the test.
func TestRowSecurity(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	owner := newStore(t)
	role, s := newRole(t, owner)
	table, q := owner.n.table, pgx.Identifier{role}.Sanitize()
	exec := func(sql string) {
		t.Helper()
		if _, err := sharedPool.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	read := func(s *Store) RowSecurity {
		t.Helper()
		r, err := s.RowSecurity(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}

	if r := read(s); r.Role != role || r.Enabled || r.Active || r.MayHideRows() || len(r.Policies) != 0 {
		t.Fatalf("without row security: %+v", r)
	}
	exec(`ALTER TABLE ` + table + ` ENABLE ROW LEVEL SECURITY; ALTER TABLE ` + table + ` FORCE ROW LEVEL SECURITY`)
	if r := read(s); !r.Enabled || !r.Forced || !r.Active || !r.MayHideRows() {
		t.Fatalf("forced, without a policy (every row hidden): %+v", r)
	}
	if r := read(owner); r.Active || r.MayHideRows() {
		t.Fatalf("a superuser bypasses row security: %+v", r)
	}

	exec(`CREATE POLICY hide_x ON ` + table + ` FOR ALL TO ` + q + ` USING (tenant_id IS DISTINCT FROM 'x');
CREATE POLICY others ON ` + table + ` FOR ALL TO pg_read_all_data USING (true)`)
	r := read(s)
	if !r.MayHideRows() || !slices.Equal(r.AppliedPolicies(), []string{"hide_x"}) || len(r.Policies) != 2 {
		t.Fatalf("a policy hiding tenant x: %+v", r)
	}
	if p := r.Policies[0]; p.Name != "hide_x" || p.Command != "ALL" || !slices.Equal(p.Roles, []string{role}) || !p.Permissive || p.Using == "" || p.Using == "true" {
		t.Fatalf("policy %+v", p)
	}
	if p := r.Policies[1]; p.AppliesToRole || !slices.Equal(p.Roles, []string{"pg_read_all_data"}) {
		t.Fatalf("a policy for another role: %+v", p)
	}

	exec(`DROP POLICY hide_x ON ` + table + `; CREATE POLICY relay_all ON ` + table + ` FOR ALL TO ` + q + ` USING (true) WITH CHECK (true)`)
	if r := read(s); !r.Active || r.MayHideRows() || !slices.Equal(r.AppliedPolicies(), []string{"relay_all"}) {
		t.Fatalf("a policy that lets every row through: %+v", r)
	}
	exec(`CREATE POLICY only_x ON ` + table + ` AS RESTRICTIVE FOR SELECT TO public USING (tenant_id = 'x')`)
	if r := read(s); !r.MayHideRows() || !slices.Equal(r.AppliedPolicies(), []string{"only_x", "relay_all"}) {
		t.Fatalf("a restrictive policy for public: %+v", r)
	}
	exec(`DROP POLICY only_x ON ` + table + `; DROP POLICY relay_all ON ` + table + `;
CREATE POLICY reads ON ` + table + ` FOR SELECT TO public USING (true)`)
	if r := read(s); !r.MayHideRows() {
		t.Fatalf("every row readable, none updatable: %+v", r)
	}
}
