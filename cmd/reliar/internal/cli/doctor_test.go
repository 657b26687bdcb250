package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reliar/reliar/cmd/reliar/internal/doctor"
	"github.com/reliar/reliar/cmd/reliar/internal/exitcode"
)

// doctorRun runs reliar doctor --json on the target and returns its report
// and exit status, which must be 1 exactly when a check is red.
func doctorRun(t *testing.T, tg opsTarget, args ...string) (doctor.Report, int) {
	t.Helper()
	r := run(t, nil, tg.cmd(append([]string{"doctor", "--json"}, args...)...)...)
	var rep doctor.Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("doctor: code %d, stdout %q, stderr %q: %v", r.code, r.stdout, r.stderr, err)
	}
	wantCode := exitcode.OK
	if rep.Red > 0 {
		wantCode = exitcode.Failure
		if !strings.Contains(r.stderr, "the outbox table is unhealthy") {
			t.Fatalf("stderr %q", r.stderr)
		}
	} else if r.stderr != "" {
		t.Fatalf("stderr %q, want nothing", r.stderr)
	}
	if r.code != wantCode {
		t.Fatalf("exit %d with %d red checks", r.code, rep.Red)
	}
	return rep, r.code
}

// verdict returns the verdict of a check and fails when it is missing.
func verdict(t *testing.T, rep doctor.Report, name string) doctor.Check {
	t.Helper()
	c, ok := rep.Find(name)
	if !ok {
		t.Fatalf("no %q check in %+v", name, rep.Checks)
	}
	return c
}

// pgExec runs statements on the test database.
func pgExec(t *testing.T, sql ...string) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, postgresURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, s := range sql {
		if _, err := conn.Exec(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// tableChecks are the checks about the outbox table itself; the others
// (transactions, slots) see the whole database, shared with other tests.
var tableChecks = []string{
	doctor.CheckSchema, doctor.CheckIndexes, doctor.CheckClaimPlan, doctor.CheckDeadTuples,
	doctor.CheckSize, doctor.CheckLapsed, doctor.CheckOldestDue, doctor.CheckDeadLetters,
	doctor.CheckXIDAhead, doctor.CheckRowSecurity,
}

func TestDoctorHealthy(t *testing.T) {
	t.Parallel()
	tg := newPostgresTarget(t, true)
	seed(t, tg, append(repeat(20, seedRow{"orders.placed", "", fatePublished}), repeat(5, seedRow{"orders.placed", "", fateDue})...)...)
	rep, _ := doctorRun(t, tg)
	if len(rep.Checks) != 13 {
		t.Fatalf("%d checks, want 13: %+v", len(rep.Checks), rep.Checks)
	}
	for _, name := range tableChecks {
		if c := verdict(t, rep, name); c.Verdict != doctor.OK || c.Found == "" {
			t.Errorf("%s: %+v, want ok", name, c)
		}
	}
	if c := verdict(t, rep, doctor.CheckClaimPlan); !strings.Contains(c.Found, "claim uses outbox_pending_idx") {
		t.Errorf("claim plan found %q", c.Found)
	}

	// The human report: a table of the checks, the summary last.
	r := run(t, nil, tg.cmd("doctor")...)
	if !strings.HasPrefix(r.stdout, "doctor: postgres 127.0.0.1:5432/test schema \""+tg.schema+"\"\nCHECK") {
		t.Fatalf("stdout %q", r.stdout)
	}
	if last := lastLine(t, r.stdout); !strings.HasPrefix(last, "doctor: ") || !strings.HasSuffix(last, " red") {
		t.Fatalf("last line %q", last)
	}
}

func TestDoctorOpenTransaction(t *testing.T) {
	t.Parallel()
	tg := newPostgresTarget(t, true)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, postgresURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, "SELECT txid_current()"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1200 * time.Millisecond)

	rep, _ := doctorRun(t, tg, "--warn-age", "1s", "--red-age", "1h")
	c := verdict(t, rep, doctor.CheckOldestXact)
	if c.Verdict == doctor.OK || !strings.Contains(c.Found, "pid ") || c.Fix == "" || c.Why == "" {
		t.Fatalf("with a transaction open over 1s, warn from 1s: %+v", c)
	}
	rep, code := doctorRun(t, tg, "--warn-age", "500ms", "--red-age", "1s")
	if c := verdict(t, rep, doctor.CheckOldestXact); c.Verdict != doctor.Red || code != exitcode.Failure {
		t.Fatalf("red from 1s: %+v, exit %d", c, code)
	}
}

func TestDoctorDroppedIndexes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		drop            string
		indexes, claims doctor.Verdict
	}{
		{doctor.PendingKeyIdx, doctor.Warn, doctor.Warn},
		{doctor.PendingIndex, doctor.Red, doctor.Red},
		{doctor.DeadAtIndex, doctor.Warn, doctor.OK},
	}
	for _, tt := range tests {
		t.Run(tt.drop, func(t *testing.T) {
			t.Parallel()
			tg := newPostgresTarget(t, true)
			seed(t, tg, repeat(3, seedRow{"orders.placed", "", fateDue})...)
			pgExec(t, "DROP INDEX "+pgx.Identifier{tg.schema, tt.drop}.Sanitize())
			rep, _ := doctorRun(t, tg)
			ix := verdict(t, rep, doctor.CheckIndexes)
			if ix.Verdict != tt.indexes || !strings.Contains(ix.Found, "missing: "+tt.drop) || ix.Fix == "" {
				t.Fatalf("indexes: %+v, want %s", ix, tt.indexes)
			}
			if c := verdict(t, rep, doctor.CheckClaimPlan); c.Verdict != tt.claims {
				t.Fatalf("claim plan: %+v, want %s", c, tt.claims)
			}
		})
	}
}

func TestDoctorLapsedLeases(t *testing.T) {
	t.Parallel()
	tg := newPostgresTarget(t, true)
	seed(t, tg, repeat(2, seedRow{"orders.placed", "", fateLeased})...)
	// The seeding worker "crashed" two hours ago: its leases lapsed and
	// nobody reclaimed the rows.
	pgExec(t, "UPDATE "+pgx.Identifier{tg.schema, "outbox"}.Sanitize()+" SET locked_until = now() - interval '2 hours'")
	rep, code := doctorRun(t, tg)
	c := verdict(t, rep, doctor.CheckLapsed)
	if c.Verdict != doctor.Red || code != exitcode.Failure || !strings.Contains(c.Found, "2 rows whose lease lapsed") || !strings.Contains(c.Found, "seed") {
		t.Fatalf("lapsed leases: %+v, exit %d", c, code)
	}
	rep, _ = doctorRun(t, tg, "--red-age", "3h")
	if c := verdict(t, rep, doctor.CheckLapsed); c.Verdict != doctor.Warn {
		t.Fatalf("red from 3h: %+v, want warn", c)
	}
}

func TestDoctorOldDueRowsAndDeadLetters(t *testing.T) {
	t.Parallel()
	tg := newPostgresTarget(t, true)
	seed(t, tg, append(repeat(2, seedRow{"orders.placed", "", fateDue}), seedRow{"orders.placed", "", fateDead})...)
	pgExec(t, "UPDATE "+pgx.Identifier{tg.schema, "outbox"}.Sanitize()+" SET available_at = now() - interval '5 minutes' WHERE dead_at IS NULL")
	rep, _ := doctorRun(t, tg)
	if c := verdict(t, rep, doctor.CheckOldestDue); c.Verdict != doctor.Warn || !strings.Contains(c.Found, "2 due, oldest waiting 5m") {
		t.Fatalf("oldest due: %+v, want warn", c)
	}
	if c := verdict(t, rep, doctor.CheckDeadLetters); c.Verdict != doctor.Warn || c.Found != "1 went dead in the last hour, 0 before" {
		t.Fatalf("dead letters: %+v, want warn", c)
	}
}

func TestDoctorUnmigratedAndBadInput(t *testing.T) {
	t.Parallel()
	tg := newPostgresTarget(t, false)
	rep, code := doctorRun(t, tg)
	if len(rep.Checks) != 1 || rep.Checks[0].Verdict != doctor.Red || code != exitcode.Failure ||
		!strings.Contains(rep.Checks[0].Found, "no outbox table") || !strings.Contains(rep.Checks[0].Fix, "reliar migrate") {
		t.Fatalf("unmigrated: %+v, exit %d", rep, code)
	}

	lite := newSQLiteTarget(t)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"sqlite", lite.cmd("doctor"), "doctor checks PostgreSQL outbox tables only, not sqlite"},
		{"bad warn age", tg.cmd("doctor", "--warn-age", "a while"), `invalid argument "a while"`},
		{"warn above red", tg.cmd("doctor", "--warn-age", "1h", "--red-age", "1m"), "--warn-age 1h is above --red-age 1m"},
		{"bad schema", []string{"doctor", "--database-url", postgresURL, "--schema", "a;b"}, "invalid schema name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, nil, tt.args...)
			if r.code != exitcode.Usage || r.stdout != "" || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, tt.want) {
				t.Fatalf("code %d, stdout %q, stderr %q; want 2, nothing, one line with %q", r.code, r.stdout, r.stderr, tt.want)
			}
		})
	}
}
