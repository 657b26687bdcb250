package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/reliar/reliar/cmd/reliar/internal/doctor"
	"github.com/reliar/reliar/cmd/reliar/internal/exitcode"
)

// seedRestored writes, by raw SQL as a restore does, a key whose first row
// carries an xid a million ids ahead of the database's counter and whose
// second row is a plain one, a dead row ahead, and two plain unkeyed rows.
func seedRestored(t *testing.T, tg opsTarget) {
	t.Helper()
	ahead := `(pg_current_xact_id()::text::int8 + 1000000)::text::xid8`
	pgExec(t, `INSERT INTO `+pgx.Identifier{tg.schema, "outbox"}.Sanitize()+` (id, message_type, payload, ordering_key, dead_at, dead_reason, xid) VALUES
(gen_random_uuid(), 'restored', '{}', 'customer-7', NULL, NULL, `+ahead+`),
(gen_random_uuid(), 'after', '{}', 'customer-7', NULL, NULL, DEFAULT),
(gen_random_uuid(), 'dead', '{}', 'customer-9', now(), 'permanent', `+ahead+`),
(gen_random_uuid(), 'plain', '{}', NULL, NULL, NULL, DEFAULT),
(gen_random_uuid(), 'plain', '{}', NULL, NULL, NULL, DEFAULT)`)
}

// reliar stats does not call the rows a per-key claim cannot take
// claimable, doctor says which configurations they block, and reliar repair
// xids repairs them.
func TestRepairXIDs(t *testing.T) {
	t.Parallel()
	tg := newPostgresTarget(t, true)
	seedRestored(t, tg)

	r := run(t, nil, tg.cmd("stats")...)
	if r.code != 0 {
		t.Fatalf("stats: code %d, stderr %q", r.code, r.stderr)
	}
	for _, want := range []string{
		"due              4     claimable now, except 2 of them by a per-key claim (see below)\n",
		"1 pending rows carry a transaction id ahead of this database's counter",
		"a per-key claim (--ordering per-key) takes neither them nor the later rows of their 1 keys (customer-7), so 2 due rows wait; claims without per-key ordering take them\n",
		"fix: reliar repair xids",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stats does not say %q:\n%s", want, r.stdout)
		}
	}
	if !statsLine.MatchString(lastLine(t, r.stdout)) {
		t.Errorf("the last line is not the summary:\n%s", r.stdout)
	}
	var doc struct {
		XIDAhead *struct {
			Rows, Keys, DueBlocked int64
		} `json:"xid_ahead"`
	}
	js := run(t, nil, tg.cmd("stats", "--json")...)
	if err := json.Unmarshal([]byte(js.stdout), &doc); err != nil || doc.XIDAhead == nil ||
		!strings.Contains(js.stdout, `"xid_ahead": {`) || !strings.Contains(js.stdout, `"due_blocked": 2`) || doc.XIDAhead.Rows != 1 || doc.XIDAhead.Keys != 1 {
		t.Fatalf("stats --json: %v\n%s", err, js.stdout)
	}

	rep, _ := doctorRun(t, tg)
	c := verdict(t, rep, doctor.CheckXIDAhead)
	if c.Verdict != doctor.Red || !strings.Contains(c.Found, "they block per-key claims (reliar relay --ordering per-key) on 1 ordering keys: customer-7") ||
		!strings.Contains(c.Found, "unordered and fair claims take them") || !strings.Contains(c.Fix, "reliar repair xids") {
		t.Fatalf("doctor: %+v", c)
	}

	r = run(t, nil, tg.cmd("repair", "xids")...)
	if r.code != 0 || lastLine(t, r.stdout) != "repair xids: pending_ahead=1 keys=1 repaired=2" {
		t.Fatalf("repair xids: code %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if r = run(t, nil, tg.cmd("repair", "xids", "--json")...); r.code != 0 || !strings.Contains(r.stdout, `"repaired": 0`) {
		t.Fatalf("repair xids again: code %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	r = run(t, nil, tg.cmd("stats")...)
	if !strings.Contains(r.stdout, "due              4     claimable now\n") || strings.Contains(r.stdout, "ahead") {
		t.Fatalf("stats after the repair:\n%s", r.stdout)
	}
	rep, _ = doctorRun(t, tg)
	if c := verdict(t, rep, doctor.CheckXIDAhead); c.Verdict != doctor.OK {
		t.Fatalf("doctor after the repair: %+v", c)
	}
}

func TestRepairXIDsBadInput(t *testing.T) {
	t.Parallel()
	lite := newSQLiteTarget(t)
	for name, c := range map[string]struct {
		args []string
		want string
	}{
		"sqlite":       {lite.cmd("repair", "xids"), "repair xids repairs PostgreSQL outbox tables only, not sqlite"},
		"no url":       {[]string{"repair", "xids"}, "--database-url is required"},
		"bad batch":    {[]string{"repair", "xids", "--database-url", postgresURL, "--batch-size", "-3"}, "--batch-size"},
		"unknown verb": {[]string{"repair", "everything"}, `unknown command "everything"`},
	} {
		r := run(t, nil, c.args...)
		if r.code != exitcode.Usage || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%s: code %d, stderr %q; want %d and %q", name, r.code, r.stderr, exitcode.Usage, c.want)
		}
	}
}
