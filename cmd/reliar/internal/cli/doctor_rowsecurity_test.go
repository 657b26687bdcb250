package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reliar/reliar/cmd/reliar/internal/doctor"
)

// newRoleTarget creates a login role of the test's own with the privileges
// a relay needs on tg's schema, and returns tg as that role sees it. The
// role is dropped when the test ends; no shared role is touched.
func newRoleTarget(t *testing.T, tg opsTarget) (string, opsTarget) {
	t.Helper()
	role := randomName("reliar_rls_")
	q := pgx.Identifier{role}.Sanitize()
	pgExec(t, `CREATE ROLE `+q+` LOGIN`)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, postgresURL)
		if err != nil {
			t.Errorf("drop role %s: %v", role, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, `DROP OWNED BY `+q+`; DROP ROLE `+q); err != nil {
			t.Errorf("drop role %s: %v", role, err)
		}
	})
	sq := pgx.Identifier{tg.schema}.Sanitize()
	pgExec(t, `GRANT USAGE ON SCHEMA `+sq+` TO `+q, `GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA `+sq+` TO `+q)
	url := strings.Replace(postgresURL, "postgres@", role+"@", 1)
	as := opsTarget{name: "postgres as " + role, url: url, schema: tg.schema,
		args: []string{"--database-url", url, "--schema", tg.schema}}
	return role, as
}

// doctor reports row-level security on the outbox table: red run as a role
// whose policies may hide rows (and stats says its counts leave them out),
// a warning run as a role it does not apply to (it cannot tell what it
// hides from others), ok once the role's policy lets every row through.
func TestDoctorRowSecurity(t *testing.T) {
	t.Parallel()
	tg := newPostgresTarget(t, true)
	role, relay := newRoleTarget(t, tg)
	table, q := pgx.Identifier{tg.schema, "outbox"}.Sanitize(), pgx.Identifier{role}.Sanitize()
	pgExec(t, `ALTER TABLE `+table+` ENABLE ROW LEVEL SECURITY`, `ALTER TABLE `+table+` FORCE ROW LEVEL SECURITY`,
		`CREATE POLICY hide_x ON `+table+` FOR ALL TO `+q+` USING (tenant_id IS DISTINCT FROM 'x')`)

	rep, code := doctorRun(t, relay)
	c := verdict(t, rep, doctor.CheckRowSecurity)
	if c.Verdict != doctor.Red || code != 1 || !strings.Contains(c.Found, "applies to role "+role+", which doctor runs as, through the policies hide_x (ALL, to "+role+")") ||
		!strings.Contains(c.Fix, "ALTER ROLE "+role+" BYPASSRLS") {
		t.Fatalf("doctor as %s: %+v (exit %d)", role, c, code)
	}
	// stats, run as that role, says its counts leave the hidden rows out.
	st := run(t, nil, relay.cmd("stats")...)
	if st.code != 0 || !strings.Contains(st.stdout, "\nrow-level security may hide rows from role "+role+" (policies hide_x): the counts above leave them out") {
		t.Fatalf("stats as %s: code %d, stderr %q, stdout:\n%s", role, st.code, st.stderr, st.stdout)
	}
	if st = run(t, nil, relay.cmd("stats", "--json")...); !strings.Contains(st.stdout, `"row_security_may_hide_rows": true`) {
		t.Fatalf("stats --json as %s:\n%s", role, st.stdout)
	}
	if st = run(t, nil, tg.cmd("stats")...); strings.Contains(st.stdout, "row-level security") {
		t.Fatalf("stats as postgres, whom it does not apply to:\n%s", st.stdout)
	}
	rep, _ = doctorRun(t, tg)
	if c := verdict(t, rep, doctor.CheckRowSecurity); c.Verdict != doctor.Warn || !strings.Contains(c.Found, "does not apply to role postgres") ||
		!strings.Contains(c.Found, "hide_x (ALL, to "+role+")") {
		t.Fatalf("doctor as postgres: %+v", c)
	}

	pgExec(t, `DROP POLICY hide_x ON `+table, `CREATE POLICY relay_all ON `+table+` FOR ALL TO `+q+` USING (true) WITH CHECK (true)`)
	rep, _ = doctorRun(t, relay)
	if c := verdict(t, rep, doctor.CheckRowSecurity); c.Verdict != doctor.OK || !strings.Contains(c.Found, "which let every row through") {
		t.Fatalf("doctor as %s, every row let through: %+v", role, c)
	}
}
