package doctor

import (
	"strings"
	"testing"
	"time"

	"github.com/reliar/reliar/outbox"
	"github.com/reliar/reliar/store/pgstore"
)

// healthy returns the facts of a healthy table.
func healthy() Facts {
	var ix []Index
	for _, name := range expectedIndexes {
		ix = append(ix, Index{Name: name, Valid: true, Bytes: 16384})
	}
	return Facts{
		Schema: "public", Version: 2, WantVersion: 2, TableExists: true,
		Indexes:   ix,
		ClaimPlan: Plan{Indexes: []string{PendingIndex}},
		KeyPlan:   Plan{Indexes: []string{PendingKeyIdx}},
		Table:     Table{LiveTuples: 1000, DeadTuples: 50, TableBytes: 1 << 20, IndexBytes: 1 << 19, RowWidth: 300, PendingIndexBytes: 16384, PlannerRows: 1000},
		Stats:     outbox.Stats{Pending: 10, Due: 3, OldestDueAge: time.Second, AsOf: time.Now()},
	}
}

func int64p(n int64) *int64 { return &n }

func TestEvaluate(t *testing.T) {
	th := Thresholds{WarnAge: time.Minute, RedAge: 10 * time.Minute}
	tests := []struct {
		name   string
		change func(f *Facts)
		check  string
		want   Verdict
		found  string
	}{
		{"healthy schema", func(*Facts) {}, CheckSchema, OK, "version 2, as this release needs"},
		{"newer schema", func(f *Facts) { f.Version = 3 }, CheckSchema, Warn, "newer than the 2"},
		{"healthy indexes", func(*Facts) {}, CheckIndexes, OK, "all 7 present and valid"},
		{"pending index missing", func(f *Facts) { f.Indexes = f.Indexes[1:] }, CheckIndexes, Red, "missing: outbox_pending_idx"},
		{"pending index invalid", func(f *Facts) { f.Indexes[0].Valid = false }, CheckIndexes, Red, "invalid: outbox_pending_idx"},
		{"dead index missing", func(f *Facts) { f.Indexes = f.Indexes[:2] }, CheckIndexes, Warn, "missing: outbox_dead_idx, outbox_published_at_idx"},
		{"claim walks the index", func(*Facts) {}, CheckClaimPlan, OK, "claim uses outbox_pending_idx;"},
		{"claim scans", func(f *Facts) { f.ClaimPlan = Plan{SeqScan: true} }, CheckClaimPlan, Red, "claim uses a sequential scan;"},
		{"claim through the primary key", func(f *Facts) { f.ClaimPlan = Plan{Indexes: []string{"outbox_pkey"}} }, CheckClaimPlan, Red, "claim uses outbox_pkey;"},
		{"key lookup without its index", func(f *Facts) { f.KeyPlan = Plan{} }, CheckClaimPlan, Warn, "head lookup uses no index"},
		{"fresh table, any index", func(f *Facts) {
			f.Table.PlannerRows = -1
			f.KeyPlan = Plan{Indexes: []string{TenantIndex}}
		}, CheckClaimPlan, OK, "head lookup uses outbox_tenant_pending_idx (plan not judged: the table has no planner statistics yet)"},
		{"small table, any index", func(f *Facts) {
			f.Table.PlannerRows = 12
			f.ClaimPlan = Plan{Indexes: []string{"outbox_pkey"}}
		}, CheckClaimPlan, OK, "(plan not judged: the planner counts 12 rows, fewer than 1000)"},
		{"fresh table without its key index", func(f *Facts) {
			f.Table.PlannerRows = -1
			f.Indexes = append(f.Indexes[:1], f.Indexes[2:]...)
			f.KeyPlan = Plan{Indexes: []string{TenantIndex}}
		}, CheckClaimPlan, Warn, "plan not judged"},
		{"fresh table without its pending index", func(f *Facts) {
			f.Table.PlannerRows = -1
			f.Indexes[0].Valid = false
			f.ClaimPlan = Plan{SeqScan: true}
		}, CheckClaimPlan, Red, "claim uses a sequential scan;"},
		{"no transaction", func(*Facts) {}, CheckOldestXact, OK, "no other transaction"},
		{"young transaction", func(f *Facts) { f.OldestXact = &Xact{PID: 7, User: "app", State: "active", Age: time.Second} }, CheckOldestXact, OK, "pid 7 (app), active, open 1s"},
		{"idle transaction", func(f *Facts) {
			f.OldestXact = &Xact{PID: 7, User: "app", Application: "billing", State: "idle in transaction", Age: 2 * time.Minute, XIDAge: 40}
			f.LongXacts = 2
		}, CheckOldestXact, Warn, "pid 7 (app, billing), idle in transaction, open 2m, 40 xids old; 2 transactions open longer than 1m"},
		{"hour-old transaction", func(f *Facts) { f.OldestXact = &Xact{PID: 7, Age: time.Hour} }, CheckOldestXact, Red, "open 1h"},
		{"prepared transaction", func(f *Facts) { f.OldestXact = &Xact{Application: "tx-1", State: "prepared", Age: time.Hour} }, CheckOldestXact, Red, `prepared transaction "tx-1"`},
		{"no slots", func(*Facts) {}, CheckSlots, OK, "no replication slot"},
		{"active standby slot", func(f *Facts) {
			f.Slots = []Slot{{Name: "standby", Type: "physical", Active: true, XminAge: int64p(100)}}
		}, CheckSlots, OK, "standby (physical, active, xmin 100 xids old)"},
		{"old active slot", func(f *Facts) {
			f.Slots = []Slot{{Name: "s", Type: "physical", Active: true, XminAge: int64p(20_000_000)}}
		}, CheckSlots, Warn, "xmin 20000000 xids old"},
		{"inactive logical slot", func(f *Facts) { f.Slots = []Slot{{Name: "cdc", Type: "logical", CatalogXminAge: int64p(5)}} }, CheckSlots, Warn, "cdc (logical, inactive, catalog_xmin 5 xids old)"},
		{"inactive standby slot", func(f *Facts) {
			f.Slots = []Slot{{Name: "cdc", Type: "logical", CatalogXminAge: int64p(5)}, {Name: "old", Type: "physical", XminAge: int64p(5)}}
		}, CheckSlots, Red, "old (physical, inactive, xmin 5 xids old)"},
		{"few dead tuples", func(*Facts) {}, CheckDeadTuples, OK, "50 dead, 1000 live (5% dead); last autovacuum never"},
		{"many dead tuples", func(f *Facts) { f.Table.DeadTuples = 20_000; f.Table.LiveTuples = 30_000 }, CheckDeadTuples, Warn, "40% dead"},
		{"mostly dead tuples", func(f *Facts) {
			f.Table.DeadTuples = 300_000
			last := f.Stats.AsOf.Add(-2 * time.Hour)
			f.Table.LastAutovacuum = &last
		}, CheckDeadTuples, Red, "last autovacuum 2h ago"},
		{"small table", func(*Facts) {}, CheckSize, OK, "table 1.0 MiB, indexes 512.0 KiB for ~1000 live rows (~300 bytes each)"},
		{"bloated table", func(f *Facts) { f.Table.TableBytes = 200 << 20 }, CheckSize, Warn, "table 200.0 MiB"},
		{"huge bloated table", func(f *Facts) { f.Table.TableBytes = 2 << 30 }, CheckSize, Red, "table 2.0 GiB"},
		{"big table of big rows", func(f *Facts) { f.Table.TableBytes = 2 << 30; f.Table.LiveTuples = 2_000_000 }, CheckSize, OK, "~2000000 live rows"},
		{"bloated pending index", func(f *Facts) { f.Table.PendingIndexBytes = 100 << 20 }, CheckSize, Warn, "outbox_pending_idx 100.0 MiB for 10 pending rows"},
		{"unanalyzed table", func(f *Facts) { f.Table.RowWidth = 0 }, CheckSize, OK, "~512 bytes each"},
		{"no lapsed leases", func(*Facts) {}, CheckLapsed, OK, "no lease lapsed"},
		{"lapsed just now", func(f *Facts) { f.Lapsed = Lapsed{Count: 2, Oldest: time.Second, Workers: []string{"w1"}} }, CheckLapsed, OK, "2 rows whose lease lapsed, the oldest 1s ago, held by w1"},
		{"lapsed a while ago", func(f *Facts) { f.Lapsed = Lapsed{Count: 1, Oldest: 5 * time.Minute, Workers: []string{"w1", "w2"}} }, CheckLapsed, Warn, "held by w1, w2"},
		{"lapsed long ago", func(f *Facts) { f.Lapsed = Lapsed{Count: 1, Oldest: time.Hour} }, CheckLapsed, Red, "the oldest 1h ago"},
		{"fresh due rows", func(*Facts) {}, CheckOldestDue, OK, "3 due, oldest waiting 1s"},
		{"waiting due rows", func(f *Facts) { f.Stats.OldestDueAge = 2 * time.Minute }, CheckOldestDue, Warn, "oldest waiting 2m"},
		{"stalled due rows", func(f *Facts) { f.Stats.OldestDueAge = time.Hour }, CheckOldestDue, Red, "oldest waiting 1h"},
		{"old dead rows only", func(f *Facts) { f.DeadBefore = 40 }, CheckDeadLetters, OK, "0 went dead in the last hour, 40 before"},
		{"new dead rows", func(f *Facts) { f.DeadLastHour = 3; f.DeadBefore = 40 }, CheckDeadLetters, Warn, "3 went dead"},
		{"steady flood", func(f *Facts) { f.DeadLastHour = 150; f.DeadBefore = 4000 }, CheckDeadLetters, Warn, "150 went dead"},
		{"surge", func(f *Facts) { f.DeadLastHour = 150; f.DeadBefore = 10 }, CheckDeadLetters, Red, "150 went dead in the last hour, 10 before"},
		{"no rows ahead of the xid counter", func(*Facts) {}, CheckXIDAhead, OK, "no pending row"},
		{"unkeyed rows ahead of the xid counter", func(f *Facts) { f.XIDAhead = pgstore.XIDAhead{Rows: 3, MaxAhead: 900, Oldest: time.Hour} }, CheckXIDAhead, Warn,
			"3 pending rows carry an xid ahead of this cluster's counter, up to 900 ids ahead, the oldest created 1h ago; they have no ordering key, so every claim takes them"},
		{"keyed rows ahead of the xid counter", func(f *Facts) {
			f.XIDAhead = pgstore.XIDAhead{Rows: 2, MaxAhead: 5000, Keys: 2, BlockedDue: 7, Sample: []string{"customer-1", "customer-2"}}
		}, CheckXIDAhead, Red, "they block per-key claims (reliar relay --ordering per-key) on 2 ordering keys: customer-1, customer-2 (7 due rows wait); unordered and fair claims take them"},
		{"no row security", func(*Facts) {}, CheckRowSecurity, OK, "row-level security is off"},
		{"row security hiding rows from doctor's role", func(f *Facts) {
			f.RowSecurity = pgstore.RowSecurity{Role: "relay", Enabled: true, Forced: true, Active: true, Policies: []pgstore.Policy{
				{Name: "hide_x", Command: "ALL", Roles: []string{"relay"}, Permissive: true, Using: "(tenant_id <> 'x'::text)", AppliesToRole: true},
				{Name: "admins", Command: "ALL", Roles: []string{"admin"}, Permissive: true, Using: "true"}}}
		}, CheckRowSecurity, Red, "row-level security applies to role relay, which doctor runs as, through the policies hide_x (ALL, to relay), and may hide rows from it"},
		{"row security without a policy for the role", func(f *Facts) {
			f.RowSecurity = pgstore.RowSecurity{Role: "relay", Enabled: true, Forced: true, Active: true}
		}, CheckRowSecurity, Red, "no policy is for it: it sees no row"},
		{"row security letting every row through", func(f *Facts) {
			f.RowSecurity = pgstore.RowSecurity{Role: "relay", Enabled: true, Active: true, Policies: []pgstore.Policy{
				{Name: "all", Command: "ALL", Roles: []string{"public"}, Permissive: true, Using: "true", AppliesToRole: true}}}
		}, CheckRowSecurity, OK, "through the policies all (ALL, to public), which let every row through"},
		{"row security for other roles", func(f *Facts) {
			f.RowSecurity = pgstore.RowSecurity{Role: "postgres", Enabled: true, Forced: true, Policies: []pgstore.Policy{
				{Name: "hide_x", Command: "SELECT", Roles: []string{"relay"}, Using: "(tenant_id <> 'x'::text)"}}}
		}, CheckRowSecurity, Warn, "row-level security is on (forced, the owner included) with the policies hide_x (restrictive, SELECT, to relay), but does not apply to role postgres"},
		{"writable", func(*Facts) {}, CheckWritable, OK, "the server takes writes"},
		{"standby", func(f *Facts) { f.Writable = Writable{ReadOnly: true, InRecovery: true} }, CheckWritable, Red, "standby in recovery"},
		{"read-only by default", func(f *Facts) { f.Writable = Writable{ReadOnly: true} }, CheckWritable, Red, "default_transaction_read_only"},
		{"missing privileges", func(f *Facts) { f.Writable = Writable{Role: "app", Missing: []string{"UPDATE", "DELETE"}} }, CheckWritable, Red, `role "app" lacks UPDATE, DELETE`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := healthy()
			tt.change(&f)
			checks := Evaluate(f, th)
			if len(checks) != 13 {
				t.Fatalf("%d checks", len(checks))
			}
			rep := NewReport("x", checks)
			c, ok := rep.Find(tt.check)
			if !ok {
				t.Fatalf("no %q check", tt.check)
			}
			if c.Verdict != tt.want || !strings.Contains(c.Found, tt.found) {
				t.Fatalf("%s: %s %q; want %s and %q", tt.check, c.Verdict, c.Found, tt.want, tt.found)
			}
			if (c.Verdict == OK) != (c.Why == "" && c.Fix == "") {
				t.Fatalf("%s: verdict %s with why %q and fix %q", tt.check, c.Verdict, c.Why, c.Fix)
			}
			if rep.OK+rep.Warn+rep.Red != 13 || rep.Healthy() != (rep.Red == 0) {
				t.Fatalf("report counts %+v", rep)
			}
		})
	}
}

func TestEvaluateUnmigrated(t *testing.T) {
	tests := []struct {
		name  string
		facts Facts
		found string
	}{
		{"no table", Facts{Schema: "billing", WantVersion: 2}, `no outbox table in schema "billing"`},
		{"old schema", Facts{Schema: "billing", Version: 1, WantVersion: 2, TableExists: true}, "version 1, this release needs 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := NewReport("x", Evaluate(tt.facts, Thresholds{}))
			if len(rep.Checks) != 1 || rep.Red != 1 || rep.Healthy() || !strings.Contains(rep.Checks[0].Found, tt.found) {
				t.Fatalf("report %+v", rep)
			}
		})
	}
}

func TestThresholdDefaults(t *testing.T) {
	th := Thresholds{}.withDefaults()
	if th.WarnAge != DefaultWarnAge || th.RedAge != DefaultRedAge {
		t.Fatalf("defaults %+v", th)
	}
	for age, want := range map[time.Duration]Verdict{0: OK, time.Minute: Warn, 10 * time.Minute: Red} {
		if got := th.grade(age); got != want {
			t.Errorf("grade(%v) = %s, want %s", age, got, want)
		}
	}
}

func TestParsePlan(t *testing.T) {
	tests := []struct {
		name, raw string
		want      Plan
		err       bool
	}{
		{"index scan under limit", `[{"Plan":{"Node Type":"Limit","Plans":[{"Node Type":"LockRows","Plans":[{"Node Type":"Index Scan","Relation Name":"outbox","Index Name":"outbox_pending_idx"}]}]}}]`,
			Plan{Indexes: []string{PendingIndex}}, false},
		{"bitmap scans", `[{"Plan":{"Node Type":"Bitmap Heap Scan","Relation Name":"outbox","Plans":[{"Node Type":"BitmapOr","Plans":[{"Node Type":"Bitmap Index Scan","Index Name":"a"},{"Node Type":"Bitmap Index Scan","Index Name":"a"},{"Node Type":"Bitmap Index Scan","Index Name":"b"}]}]}}]`,
			Plan{Indexes: []string{"a", "b"}}, false},
		{"sequential scan", `[{"Plan":{"Node Type":"Sort","Plans":[{"Node Type":"Seq Scan","Relation Name":"outbox"}]}}]`, Plan{SeqScan: true}, false},
		{"scan of another table", `[{"Plan":{"Node Type":"Seq Scan","Relation Name":"orders"}}]`, Plan{}, false},
		{"empty", `[]`, Plan{}, true},
		{"not json", `Seq Scan on outbox`, Plan{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parsePlan([]byte(tt.raw))
			if (err != nil) != tt.err || got.SeqScan != tt.want.SeqScan || strings.Join(got.Indexes, ",") != strings.Join(tt.want.Indexes, ",") {
				t.Fatalf("parsePlan = %+v, %v; want %+v, error %v", got, err, tt.want, tt.err)
			}
		})
	}
}

func TestRender(t *testing.T) {
	f := healthy()
	f.Stats.OldestDueAge = time.Hour
	rep := NewReport(`postgres db:5432/x schema "public"`, Evaluate(f, Thresholds{}))
	lines := rep.Lines()
	if !strings.HasPrefix(lines[0], "CHECK               VERDICT  FOUND") || len(lines) != 14+4 {
		t.Fatalf("lines:\n%s", strings.Join(lines, "\n"))
	}
	if lines[15] != "RED: oldest due row" || !strings.HasPrefix(lines[16], "  why: ") || !strings.HasPrefix(lines[17], "  fix: ") {
		t.Fatalf("advice:\n%s", strings.Join(lines[14:], "\n"))
	}
	if rep.Summary() != "doctor: 12 ok, 0 warn, 1 red" {
		t.Fatalf("summary %q", rep.Summary())
	}
}

func TestFormatBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 1536: "1.5 KiB", 5 << 20: "5.0 MiB", 3 << 40: "3.0 TiB"} {
		if got := formatBytes(n); got != want {
			t.Errorf("formatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}
