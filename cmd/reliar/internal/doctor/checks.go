package doctor

import (
	"fmt"
	"strings"
	"time"

	"github.com/reliar/reliar/cmd/reliar/internal/ops"
	"github.com/reliar/reliar/store/pgstore"
)

// Names of the checks, in the order Evaluate returns them.
const (
	CheckSchema      = "schema version"
	CheckIndexes     = "indexes"
	CheckClaimPlan   = "claim plan"
	CheckOldestXact  = "oldest transaction"
	CheckSlots       = "replication slots"
	CheckDeadTuples  = "dead tuples"
	CheckSize        = "table size"
	CheckLapsed      = "lapsed leases"
	CheckOldestDue   = "oldest due row"
	CheckDeadLetters = "dead letters"
	CheckXIDAhead    = "xids ahead"
	CheckRowSecurity = "row security"
)

// Size and count limits of the checks.
const (
	// smallTable is the size below which bloat is not worth a verdict.
	smallTable = 64 << 20
	// bigTable is the size from which heavy bloat is red.
	bigTable = 1 << 30
	// pendingEntryBytes is a generous size of one pending index entry.
	pendingEntryBytes = 64
	// deadTuplesWarn and deadTuplesRed are the dead tuple counts from which
	// a high dead share warns or is red.
	deadTuplesWarn = 10_000
	deadTuplesRed  = 100_000
	// slotXIDAgeWarn is the xmin age from which an active slot warns.
	slotXIDAgeWarn = 10_000_000
	// planMinRows is the row count of the planner's statistics from which
	// its choice of index is judged: on a smaller or never analyzed table
	// (a fresh one) any index is as cheap as another, and the choice says
	// nothing about the table it will become.
	planMinRows = 1000
	// deadSurge is the number of rows dead within an hour from which a
	// surge above all earlier dead rows is red.
	deadSurge = 100
)

// Evaluate turns facts into checks. When the table is missing or its schema
// is behind, only the schema check is returned: the others need the table.
func Evaluate(f Facts, th Thresholds) []Check {
	th = th.withDefaults()
	schema := checkSchema(f)
	if schema.Verdict == Red {
		return []Check{schema}
	}
	return []Check{
		schema,
		checkIndexes(f),
		checkClaimPlan(f),
		checkOldestXact(f, th),
		checkSlots(f),
		checkDeadTuples(f),
		checkSize(f),
		checkLapsed(f, th),
		checkOldestDue(f, th),
		checkDeadLetters(f),
		checkXIDAhead(f),
		checkRowSecurity(f),
		checkWritable(f),
	}
}

func checkSchema(f Facts) Check {
	c := Check{Name: CheckSchema}
	switch {
	case !f.TableExists:
		c.Verdict = Red
		c.Found = fmt.Sprintf("no outbox table in schema %q (version %d, need %d)", f.Schema, f.Version, f.WantVersion)
		c.Why = "nothing can be enqueued or dispatched, and the other checks cannot run"
		c.Fix = "check --database-url and --schema; to create the table: reliar migrate with the same flags"
	case f.Version < f.WantVersion:
		c.Verdict = Red
		c.Found = fmt.Sprintf("version %d, this release needs %d", f.Version, f.WantVersion)
		c.Why = "stores of this release refuse to open the schema, and the other checks cannot run"
		c.Fix = "reliar migrate with the same --database-url and --schema (idempotent, safe while relays run)"
	case f.Version > f.WantVersion:
		c.Verdict = Warn
		c.Found = fmt.Sprintf("version %d, newer than the %d this reliar knows", f.Version, f.WantVersion)
		c.Why = "a newer release migrated the schema; this binary's checks may miss what it added"
		c.Fix = "upgrade reliar to the release that migrated the schema"
	default:
		c.Verdict = OK
		c.Found = fmt.Sprintf("version %d, as this release needs", f.Version)
	}
	return c
}

func checkIndexes(f Facts) Check {
	have := make(map[string]Index, len(f.Indexes))
	for _, ix := range f.Indexes {
		have[ix.Name] = ix
	}
	var missing, invalid []string
	for _, name := range expectedIndexes {
		ix, ok := have[name]
		switch {
		case !ok:
			missing = append(missing, name)
		case !ix.Valid:
			invalid = append(invalid, name)
		}
	}
	c := Check{Name: CheckIndexes}
	if len(missing)+len(invalid) == 0 {
		c.Verdict = OK
		c.Found = fmt.Sprintf("all %d present and valid", len(expectedIndexes))
		return c
	}
	var parts []string
	if len(missing) > 0 {
		parts = append(parts, "missing: "+strings.Join(missing, ", "))
	}
	if len(invalid) > 0 {
		parts = append(parts, "invalid: "+strings.Join(invalid, ", "))
	}
	c.Found = strings.Join(parts, "; ")
	c.Verdict = Warn
	if contains(missing, PendingIndex) || contains(invalid, PendingIndex) {
		c.Verdict = Red
	}
	c.Why = "the claim walks outbox_pending_idx; per-key ordering, fair claims across tenants, dead-letter listing, retention and expiry each read one of the others; without them every claim or sweep scans the table"
	c.Fix = fmt.Sprintf("recreate %s as migrations 0001_outbox.up.sql and 0005_outbox_tenant_index.up.sql define them (reliar migrate --print-sql --schema %s shows the statements), with CREATE INDEX CONCURRENTLY so that writes go on; DROP INDEX CONCURRENTLY an invalid index first",
		strings.Join(append(missing, invalid...), ", "), f.Schema)
	return c
}

func checkClaimPlan(f Facts) Check {
	c := Check{Name: CheckClaimPlan}
	if len(f.Writable.Missing) > 0 {
		c.Verdict = Warn
		c.Found = "not explained: explaining the claim, an UPDATE, needs the privileges the role lacks (see the writable check)"
		c.Fix = "run reliar doctor as a role that may update the outbox table"
		return c
	}
	claimOK := f.ClaimPlan.uses(PendingIndex) && !f.ClaimPlan.SeqScan
	keyOK := f.KeyPlan.uses(PendingKeyIdx) && !f.KeyPlan.SeqScan
	c.Found = fmt.Sprintf("claim uses %s; per-key head lookup uses %s", planSummary(f.ClaimPlan), planSummary(f.KeyPlan))
	if rows := f.Table.PlannerRows; rows < planMinRows {
		// Too small to judge: only an index that is missing or invalid
		// is a finding (the indexes check names it).
		claimOK = claimOK || f.hasValidIndex(PendingIndex)
		keyOK = keyOK || f.hasValidIndex(PendingKeyIdx)
		why := fmt.Sprintf("the planner counts %d rows, fewer than %d", rows, planMinRows)
		if rows < 0 {
			why = "the table has no planner statistics yet"
		}
		c.Found += " (plan not judged: " + why + ")"
	}
	switch {
	case !claimOK:
		c.Verdict = Red
		c.Why = "even with sequential scans disabled the claim cannot walk outbox_pending_idx: every claim reads every row of the table, published ones included, and gets slower as the table grows"
		c.Fix = "restore outbox_pending_idx (see the indexes check); then ANALYZE the table"
	case !keyOK:
		c.Verdict = Warn
		c.Why = "with per-key ordering each candidate row looks for an older pending row of its key; without outbox_pending_key_idx that lookup scans"
		c.Fix = "restore outbox_pending_key_idx (see the indexes check), or ignore this if no dispatcher runs with per-key ordering"
	default:
		c.Verdict = OK
	}
	return c
}

// planSummary names what a plan reads.
func planSummary(p Plan) string {
	var parts []string
	if p.SeqScan {
		parts = append(parts, "a sequential scan")
	}
	parts = append(parts, p.Indexes...)
	if len(parts) == 0 {
		return "no index"
	}
	return strings.Join(parts, " + ")
}

func checkOldestXact(f Facts, th Thresholds) Check {
	c := Check{Name: CheckOldestXact}
	x := f.OldestXact
	if x == nil {
		c.Verdict = OK
		c.Found = "no other transaction holds back the xmin horizon"
		return c
	}
	who := fmt.Sprintf("pid %d", x.PID)
	if x.PID == 0 {
		who = fmt.Sprintf("prepared transaction %q", x.Application)
	} else if x.Application != "" {
		who += fmt.Sprintf(" (%s, %s)", x.User, x.Application)
	} else {
		who += fmt.Sprintf(" (%s)", x.User)
	}
	c.Found = fmt.Sprintf("%s, %s, open %s, %d xids old", who, x.State, ops.FormatDuration(x.Age), x.XIDAge)
	if f.LongXacts > 1 {
		c.Found += fmt.Sprintf("; %d transactions open longer than %s", f.LongXacts, ops.FormatDuration(th.WarnAge))
	}
	c.Verdict = th.grade(x.Age)
	if c.Verdict != OK {
		c.Why = "while it is open, VACUUM cannot remove the row versions every claim, outcome and purge leaves behind: the table and its indexes bloat and claims slow down"
		if x.PID == 0 {
			c.Fix = fmt.Sprintf("COMMIT PREPARED or ROLLBACK PREPARED %s", quoteLiteral(x.Application))
		} else {
			c.Fix = fmt.Sprintf("end it in the application (commit, or do not hold transactions open across slow work), or SELECT pg_terminate_backend(%d); set idle_in_transaction_session_timeout to stop it recurring", x.PID)
		}
	}
	return c
}

func checkSlots(f Facts) Check {
	c := Check{Name: CheckSlots, Verdict: OK}
	if len(f.Slots) == 0 {
		c.Found = "no replication slot holds back a horizon"
		return c
	}
	var parts, inactive []string
	for _, s := range f.Slots {
		state := "active"
		if !s.Active {
			state = "inactive"
		}
		part := fmt.Sprintf("%s (%s, %s", s.Name, s.Type, state)
		if s.XminAge != nil {
			part += fmt.Sprintf(", xmin %d xids old", *s.XminAge)
		}
		if s.CatalogXminAge != nil {
			part += fmt.Sprintf(", catalog_xmin %d xids old", *s.CatalogXminAge)
		}
		parts = append(parts, part+")")
		switch {
		case !s.Active && s.XminAge != nil:
			c.Verdict = Red
			inactive = append(inactive, s.Name)
		case !s.Active:
			c.Verdict = worse(c.Verdict, Warn)
			inactive = append(inactive, s.Name)
		case s.XminAge != nil && *s.XminAge >= slotXIDAgeWarn:
			c.Verdict = worse(c.Verdict, Warn)
		}
	}
	c.Found = strings.Join(parts, "; ")
	if c.Verdict != OK {
		c.Why = "a slot's xmin (a standby with hot_standby_feedback) stops VACUUM cluster-wide like an open transaction; an inactive slot never advances, and also keeps WAL until the disk fills"
		c.Fix = "reconnect the standby or consumer behind the slot, or drop a slot nobody uses: SELECT pg_drop_replication_slot('name')"
		if len(inactive) > 0 {
			c.Fix += "; inactive: " + strings.Join(inactive, ", ")
		}
	}
	return c
}

func checkDeadTuples(f Facts) Check {
	t := f.Table
	c := Check{Name: CheckDeadTuples, Verdict: OK}
	share := 0.0
	if t.LiveTuples+t.DeadTuples > 0 {
		share = float64(t.DeadTuples) / float64(t.LiveTuples+t.DeadTuples)
	}
	c.Found = fmt.Sprintf("%d dead, %d live (%.0f%% dead); last autovacuum %s, last vacuum %s",
		t.DeadTuples, t.LiveTuples, share*100, since(t.LastAutovacuum, f.Stats.AsOf), since(t.LastVacuum, f.Stats.AsOf))
	switch {
	case t.DeadTuples >= deadTuplesRed && share >= 0.5:
		c.Verdict = Red
	case t.DeadTuples >= deadTuplesWarn && share >= 0.2:
		c.Verdict = Warn
	}
	if c.Verdict != OK {
		c.Why = "every claim skips dead row versions in the pending index and the heap; a queue table lives on VACUUM keeping up"
		c.Fix = fmt.Sprintf("VACUUM (VERBOSE) %q.outbox; if it removes little, something pins the xmin horizon (see oldest transaction and replication slots); keep the table's aggressive autovacuum settings from the migration", f.Schema)
	}
	return c
}

func checkSize(f Facts) Check {
	t := f.Table
	c := Check{Name: CheckSize, Verdict: OK}
	width := t.RowWidth
	if width <= 0 {
		width = 512 // unknown before ANALYZE: a modest JSON message
	}
	expected := max((t.LiveTuples)*(width+24), 8192)
	bloat := float64(t.TableBytes) / float64(expected)
	pendingEntries := max(f.Stats.Pending, 1)
	indexBloat := float64(t.PendingIndexBytes) / float64(pendingEntries*pendingEntryBytes)
	c.Found = fmt.Sprintf("table %s, indexes %s for ~%d live rows (~%d bytes each); outbox_pending_idx %s for %d pending rows",
		formatBytes(t.TableBytes), formatBytes(t.IndexBytes), t.LiveTuples, width, formatBytes(t.PendingIndexBytes), f.Stats.Pending)
	switch {
	case t.TableBytes >= bigTable && bloat >= 10:
		c.Verdict = Red
	case t.TableBytes >= smallTable && bloat >= 4, t.PendingIndexBytes >= smallTable && indexBloat >= 10:
		c.Verdict = Warn
	}
	if c.Verdict != OK {
		c.Why = "the table or its pending index is many times larger than its live rows need: space freed by VACUUM is reused but not returned, and a bloated pending index slows every claim"
		c.Fix = fmt.Sprintf("first make VACUUM keep up (dead tuples, oldest transaction); then REINDEX INDEX CONCURRENTLY %q.%s, and pg_repack (online) or VACUUM FULL (locks the table) to shrink it; also lower --published-retention if published rows pile up",
			f.Schema, PendingIndex)
	}
	return c
}

func checkLapsed(f Facts, th Thresholds) Check {
	l := f.Lapsed
	c := Check{Name: CheckLapsed, Verdict: OK}
	if l.Count == 0 {
		c.Found = "no lease lapsed without a reclaim"
		return c
	}
	c.Found = fmt.Sprintf("%d rows whose lease lapsed, the oldest %s ago, held by %s",
		l.Count, ops.FormatDuration(l.Oldest), strings.Join(l.Workers, ", "))
	c.Verdict = th.grade(l.Oldest)
	if c.Verdict != OK {
		c.Why = "their dispatchers crashed, hung or lost their lease renewals, and no dispatcher has claimed them since: the next claim retries them (counting a lapsed claim; at max-claims they go dead)"
		c.Fix = "check that a relay runs against this schema and why the named workers stopped (their logs, OOM kills, publish timeouts longer than the lease); lengthen --lease if publishing outlasts it"
	}
	return c
}

func checkOldestDue(f Facts, th Thresholds) Check {
	st := f.Stats
	c := Check{Name: CheckOldestDue}
	c.Found = fmt.Sprintf("%d due, oldest waiting %s; %d leased, %d scheduled, %d expired awaiting the sweep",
		st.Due, ops.FormatDuration(st.OldestDueAge), st.Leased, st.Scheduled, st.ExpiredPending)
	c.Verdict = th.grade(st.OldestDueAge)
	if c.Verdict != OK {
		c.Why = "due rows wait for a claim: no dispatcher is running, or they cannot keep up, so messages reach the broker late"
		c.Fix = "check that a relay runs against this schema and its /readyz; if it runs, raise --dispatchers, --batch-size or --max-in-flight, and look at the broker's latency"
	}
	return c
}

func checkDeadLetters(f Facts) Check {
	c := Check{Name: CheckDeadLetters, Verdict: OK}
	c.Found = fmt.Sprintf("%d went dead in the last hour, %d before", f.DeadLastHour, f.DeadBefore)
	switch {
	case f.DeadLastHour >= deadSurge && f.DeadLastHour > f.DeadBefore:
		c.Verdict = Red
	case f.DeadLastHour > 0:
		c.Verdict = Warn
	}
	if c.Verdict != OK {
		c.Why = "messages are failing for good (permanent errors, too many attempts or lapsed claims, expiry, undecodable rows); each is a message consumers never got"
		c.Fix = "reliar dead list shows them with their last_error (the newest last); fix the cause, then reliar dead retry --all-matching with filters (or dead purge)"
	}
	return c
}

func checkXIDAhead(f Facts) Check {
	x := f.XIDAhead
	c := Check{Name: CheckXIDAhead, Verdict: OK}
	if x.Rows == 0 {
		c.Found = "no pending row carries an xid this cluster has not reached"
		return c
	}
	c.Found = fmt.Sprintf("%d pending rows carry an xid ahead of this cluster's counter, up to %d ids ahead, the oldest created %s ago",
		x.Rows, x.MaxAhead, ops.FormatDuration(x.Oldest.Round(time.Second)))
	c.Verdict = Warn
	if x.Keys > 0 {
		// Red: a per-key relay never publishes those keys, and nothing
		// here tells whether one runs.
		c.Verdict = Red
		c.Found += fmt.Sprintf("; they block per-key claims (reliar relay --ordering per-key) on %d ordering keys: %s (%d due rows wait); unordered and fair claims take them",
			x.Keys, strings.Join(x.Sample, ", "), x.BlockedDue)
	} else {
		c.Found += "; they have no ordering key, so every claim takes them"
	}
	c.Why = "the rows were copied with their xid from another cluster (a dump restored, logical replication); a per-key claim takes a keyed row only once its xid is older than every running transaction, so each blocks its key, and the rows behind it, until this cluster has used that many transaction ids"
	c.Fix = fmt.Sprintf("reliar repair xids with the same --database-url and --schema %s, which runs, in batches: UPDATE %q.outbox SET xid = pg_current_xact_id() WHERE published_at IS NULL AND xid >= pg_snapshot_xmax(pg_current_snapshot()); when importing rows, leave xid out of the column list so that its default applies", f.Schema, f.Schema)
	return c
}

func checkRowSecurity(f Facts) Check {
	r := f.RowSecurity
	c := Check{Name: CheckRowSecurity, Verdict: OK}
	fix := fmt.Sprintf("exempt the dispatchers' role: ALTER ROLE name BYPASSRLS (as a superuser), or CREATE POLICY reliar_all ON %q.outbox TO name USING (true) WITH CHECK (true); or run them as the table's owner without FORCE ROW LEVEL SECURITY", f.Schema)
	switch {
	case !r.Enabled:
		c.Found = "row-level security is off on the outbox table"
	case r.MayHideRows():
		c.Verdict = Red
		if applied := r.AppliedPolicies(); len(applied) > 0 {
			c.Found = fmt.Sprintf("row-level security applies to role %s, which doctor runs as, through %s, and may hide rows from it", r.Role, policyList(r, true))
		} else {
			c.Found = fmt.Sprintf("row-level security applies to role %s, which doctor runs as, and no policy is for it: it sees no row", r.Role)
		}
		c.Why = "a dispatcher running as this role never sees the rows the policies hide: they are never published, and stats, doctor and the relay's gauges do not count them; under per-key ordering a hidden older row of a key would let its newer rows publish first, so the relay refuses per-key ordering here"
		c.Fix = strings.ReplaceAll(fix, "name", r.Role)
	case r.Active:
		c.Found = fmt.Sprintf("row-level security applies to role %s through %s, which let every row through", r.Role, policyList(r, true))
	default:
		c.Verdict = Warn
		c.Found = fmt.Sprintf("row-level security is on (%s) with %s, but does not apply to role %s, which doctor runs as", forcedText(r.Forced), policyList(r, false), r.Role)
		c.Why = "it filters the rows of every role it applies to: a relay running as one never sees, publishes or counts the rows its policies hide, and under per-key ordering could publish a key's rows out of order; doctor, running as another role, cannot tell what it hides"
		c.Fix = "run reliar doctor as the relay's role (with the relay's --database-url) to judge; " + fix
	}
	return c
}

// policyList names the policies of r, only those for its role when mine.
func policyList(r pgstore.RowSecurity, mine bool) string {
	var parts []string
	for _, p := range r.Policies {
		if mine && !p.AppliesToRole {
			continue
		}
		kind := ""
		if !p.Permissive {
			kind = "restrictive, "
		}
		parts = append(parts, fmt.Sprintf("%s (%s%s, to %s)", p.Name, kind, p.Command, strings.Join(p.Roles, ", ")))
	}
	if len(parts) == 0 {
		return "no policy"
	}
	return "the policies " + strings.Join(parts, "; ")
}

func forcedText(forced bool) string {
	if forced {
		return "forced, the owner included"
	}
	return "not forced: the owner bypasses it"
}

// worse returns the worse of two verdicts.
func worse(a, b Verdict) Verdict {
	rank := map[Verdict]int{OK: 0, Warn: 1, Red: 2}
	if rank[b] > rank[a] {
		return b
	}
	return a
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// since says how long ago t was, relative to now; "never" for nil.
func since(t *time.Time, now time.Time) string {
	if t == nil {
		return "never"
	}
	if now.IsZero() {
		now = time.Now()
	}
	return ops.FormatDuration(now.Sub(*t).Round(time.Second)) + " ago"
}

// formatBytes formats a size in binary units.
func formatBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// quoteLiteral quotes s as an SQL string literal.
func quoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
