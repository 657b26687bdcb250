package pgstore

import (
	"context"
)

// RowSecurity is the row-level security of the outbox table as it applies
// to the role the store's pool connects as. Policies that hide rows from
// that role hide them from every claim: the rows are never published nor
// counted, and under per-key ordering a hidden older row of a key lets its
// newer rows go first. See [RowSecurity.MayHideRows].
type RowSecurity struct {
	// Role is the role the store's connections act as (current_user).
	Role string
	// Enabled is true after ALTER TABLE … ENABLE ROW LEVEL SECURITY.
	Enabled bool
	// Forced is true after ALTER TABLE … FORCE ROW LEVEL SECURITY: the
	// policies apply to the table's owner too.
	Forced bool
	// Active is true when the policies filter what Role reads and writes
	// (row_security_active): Enabled, and Role is neither a superuser, nor
	// a role with BYPASSRLS, nor the owner of a table that is not Forced.
	Active bool
	// Policies are every policy of the table, in name order.
	Policies []Policy
}

// Policy is one row-level security policy of the outbox table.
type Policy struct {
	Name string
	// Command is ALL, SELECT, INSERT, UPDATE or DELETE.
	Command string
	// Roles are the roles the policy is for; "public" means every role.
	Roles []string
	// Permissive is false for a RESTRICTIVE policy.
	Permissive bool
	// Using is the USING expression as PostgreSQL prints it ("true" for
	// USING (true)), "" when the policy has none.
	Using string
	// AppliesToRole is true when the policy is for RowSecurity.Role: by
	// name, through membership of a role it names, or for public.
	AppliesToRole bool
}

// MayHideRows reports whether the policies may hide rows of the table from
// Role: row security is Active for it, and for reading or for updating
// (a claim does both) no permissive policy for Role lets every row through
// with USING (true), or a restrictive one has a USING expression other
// than true. Without any policy for Role, row security hides every row.
func (r RowSecurity) MayHideRows() bool {
	if !r.Active {
		return false
	}
	return !r.passesEveryRow("SELECT") || !r.passesEveryRow("UPDATE")
}

// passesEveryRow reports whether the policies for Role let every row
// through for command.
func (r RowSecurity) passesEveryRow(command string) bool {
	passes := false
	for _, p := range r.Policies {
		if !p.AppliesToRole || (p.Command != "ALL" && p.Command != command) {
			continue
		}
		switch {
		case p.Permissive && p.Using == "true":
			passes = true
		case !p.Permissive && p.Using != "" && p.Using != "true":
			return false
		}
	}
	return passes
}

// AppliedPolicies names the policies for Role.
func (r RowSecurity) AppliedPolicies() []string {
	var names []string
	for _, p := range r.Policies {
		if p.AppliesToRole {
			names = append(names, p.Name)
		}
	}
	return names
}

// rowSecuritySQL reads the table's row security flags and whether it is
// active for the current role.
const rowSecuritySQL = `SELECT current_user::text, c.relrowsecurity, c.relforcerowsecurity,
    row_security_active(c.oid)
FROM pg_catalog.pg_class c WHERE c.oid = $1::regclass`

// policiesSQL reads the table's policies. pg_has_role is asked only about
// real roles: the OID 0 in polroles stands for public.
const policiesSQL = `SELECT p.polname::text,
    CASE p.polcmd WHEN 'r' THEN 'SELECT' WHEN 'a' THEN 'INSERT' WHEN 'w' THEN 'UPDATE'
        WHEN 'd' THEN 'DELETE' ELSE 'ALL' END,
    ARRAY(SELECT CASE WHEN r = 0 THEN 'public' ELSE pg_catalog.pg_get_userbyid(r)::text END
          FROM unnest(p.polroles) r ORDER BY 1),
    p.polpermissive,
    coalesce(pg_catalog.pg_get_expr(p.polqual, p.polrelid), ''),
    EXISTS (SELECT 1 FROM unnest(p.polroles) r
            WHERE CASE WHEN r = 0 THEN true ELSE pg_catalog.pg_has_role(current_user, r, 'MEMBER') END)
FROM pg_catalog.pg_policy p WHERE p.polrelid = $1::regclass
ORDER BY p.polname`

// RowSecurity reads the row-level security of the outbox table as it
// applies to the store's role. It reads the catalogs only.
func (s *Store) RowSecurity(ctx context.Context) (RowSecurity, error) {
	var r RowSecurity
	err := s.pool.QueryRow(ctx, rowSecuritySQL, s.n.table).Scan(&r.Role, &r.Enabled, &r.Forced, &r.Active)
	if err != nil {
		return RowSecurity{}, wrapErr("read row security", err)
	}
	rows, err := s.pool.Query(ctx, policiesSQL, s.n.table)
	if err != nil {
		return RowSecurity{}, wrapErr("read row security policies", err)
	}
	defer rows.Close()
	for rows.Next() {
		var p Policy
		if err := rows.Scan(&p.Name, &p.Command, &p.Roles, &p.Permissive, &p.Using, &p.AppliesToRole); err != nil {
			return RowSecurity{}, wrapErr("read row security policies", err)
		}
		r.Policies = append(r.Policies, p)
	}
	if err := rows.Err(); err != nil {
		return RowSecurity{}, wrapErr("read row security policies", err)
	}
	return r, nil
}
