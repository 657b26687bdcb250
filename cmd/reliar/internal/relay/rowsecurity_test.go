package relay

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reliar/reliar/cmd/reliar/internal/broker"
	"github.com/reliar/reliar/cmd/reliar/internal/exitcode"
	"github.com/reliar/reliar/cmd/reliar/internal/storeurl"
	"github.com/reliar/reliar/outbox"
)

// newRole creates a login role of the test's own with the privileges a
// relay needs on s, and returns a database URL that connects as it. The
// role is dropped when the test ends; no shared role is touched.
func newRole(t *testing.T, s *schema) (string, storeurl.Location) {
	t.Helper()
	role := randomName("relay_rls_")
	q := pgx.Identifier{role}.Sanitize()
	s.exec(t, `CREATE ROLE `+q+` LOGIN`)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := s.pool.Exec(ctx, `DROP OWNED BY `+q+`; DROP ROLE `+q); err != nil {
			t.Errorf("drop role %s: %v", role, err)
		}
	})
	sq := pgx.Identifier{s.name}.Sanitize()
	s.exec(t, `GRANT USAGE ON SCHEMA `+sq+` TO `+q+`; GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA `+sq+` TO `+q)
	loc, err := storeurl.Parse("postgres://" + role + "@127.0.0.1:5432/test?sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	return role, loc
}

// With FORCE ROW LEVEL SECURITY and a policy hiding tenant x from the
// relay's role, per-key ordering is refused at start-up (a hidden older row
// would let the newer rows of its key go first); an unordered relay starts
// and warns; a policy that lets every row through is no reason to refuse.
func TestRunRowSecurity(t *testing.T) {
	s := newSchema(t)
	s.migrate(t)
	role, loc := newRole(t, s)
	prefix := randomName("relay_unit_")
	count := newStream(t, prefix)
	s.exec(t, `ALTER TABLE `+s.table()+` ENABLE ROW LEVEL SECURITY; ALTER TABLE `+s.table()+` FORCE ROW LEVEL SECURITY;
CREATE POLICY hide_x ON `+s.table()+` FOR ALL TO `+pgx.Identifier{role}.Sanitize()+` USING (tenant_id IS DISTINCT FROM 'x')`)
	s.exec(t, `INSERT INTO `+s.table()+` (id, message_type, payload, tenant_id, ordering_key)
SELECT gen_random_uuid(), 'order_placed', '\x7b7d', CASE WHEN i % 2 = 0 THEN 'x' ELSE 'y' END, 'k' || (i % 3) FROM generate_series(1, 6) i`)

	cfg := testConfig(t, s, natsURL, broker.Options{SubjectPrefix: prefix})
	cfg.Store = loc
	cfg.Settings.Ordering = outbox.PerKey
	err := start(t, cfg).wait(t)
	if !errors.Is(err, ErrRowSecurity) || exitcode.Code(err, 0) != exitcode.Usage ||
		!strings.Contains(err.Error(), role) || !strings.Contains(err.Error(), "hide_x") || !strings.Contains(err.Error(), "BYPASSRLS") {
		t.Fatalf("per-key relay under row security: Run = %v; want a usage error naming the role, the policy and the fix", err)
	}

	logs := &logBuffer{}
	cfg.Settings.Ordering = outbox.Unordered
	cfg.Logger = logs.logger()
	r := start(t, cfg)
	eventually(t, "/readyz to answer 200", r.readyz(t, http.StatusOK, "ready"))
	if !logs.has("WARN", "row-level security may hide outbox rows", "role="+role, "hide_x") {
		t.Fatalf("no warning about row-level security in:\n%s", logs)
	}
	eventually(t, "the 3 rows of tenant y", func() bool { return count() == 3 })
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}

	s.exec(t, `DROP POLICY hide_x ON `+s.table()+`; CREATE POLICY relay_all ON `+s.table()+` FOR ALL TO `+pgx.Identifier{role}.Sanitize()+` USING (true) WITH CHECK (true)`)
	cfg.Settings.Ordering = outbox.PerKey
	r = start(t, cfg)
	eventually(t, "/readyz to answer 200", r.readyz(t, http.StatusOK, "ready"))
	eventually(t, "the 3 rows of tenant x too", func() bool { return count() == 6 })
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
}
