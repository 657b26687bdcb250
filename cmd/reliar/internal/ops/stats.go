package ops

import (
	"fmt"
	"time"

	"github.com/reliar/reliar/outbox"
)

// StatsDocument is the JSON document of reliar stats.
type StatsDocument struct {
	Pending        int64 `json:"pending"`
	Due            int64 `json:"due"`
	Leased         int64 `json:"leased"`
	Scheduled      int64 `json:"scheduled"`
	Dead           int64 `json:"dead"`
	ExpiredPending int64 `json:"expired_pending"`
	// OldestDueAgeSeconds is 0 when nothing is due.
	OldestDueAgeSeconds float64 `json:"oldest_due_age_seconds"`
	// AsOf is the database's clock when the counts were taken.
	AsOf time.Time `json:"as_of"`
	// Tenants lists the tenants with due rows, the longest waiting first;
	// null when the store cannot list tenants (SQLite, MariaDB) or the
	// list is off, an empty array when no tenant has due rows.
	Tenants []TenantDocument `json:"tenants"`
	// XIDAhead counts the rows per-key claims cannot take because their
	// transaction id is ahead of the database's counter; left out when
	// the store cannot tell (SQLite, MariaDB) or was not asked (the admin
	// page, which polls).
	XIDAhead *XIDAheadDocument `json:"xid_ahead,omitempty"`
	// RowSecurityMayHideRows is true when row-level security may hide
	// rows from the role the counts were read as (PostgreSQL): the counts
	// leave them out. Left out when false.
	RowSecurityMayHideRows bool `json:"row_security_may_hide_rows,omitempty"`
}

// NewStatsDocument converts a store's Stats.
func NewStatsDocument(st outbox.Stats) StatsDocument {
	return StatsDocument{
		Pending:             st.Pending,
		Due:                 st.Due,
		Leased:              st.Leased,
		Scheduled:           st.Scheduled,
		Dead:                st.Dead,
		ExpiredPending:      st.ExpiredPending,
		OldestDueAgeSeconds: st.OldestDueAge.Seconds(),
		AsOf:                st.AsOf.UTC(),
	}
}

// StatsTable renders the gauges as an aligned table, one state a row, with
// what each state means. perKeyBlocked is how many of the due rows a
// per-key claim cannot take (rows ahead of the xid counter and the later
// rows of their keys); they are not called claimable.
func StatsTable(st outbox.Stats, perKeyBlocked int64) []string {
	due := "claimable now"
	if perKeyBlocked > 0 {
		due = fmt.Sprintf("claimable now, except %d of them by a per-key claim (see below)", perKeyBlocked)
	}
	rows := [][]string{
		{"STATE", "ROWS", "MEANING"},
		{"due", fmt.Sprint(st.Due), due},
		{"leased", fmt.Sprint(st.Leased), "held by a dispatcher's live lease"},
		{"scheduled", fmt.Sprint(st.Scheduled), "due later (retry delay or available_at)"},
		{"expired_pending", fmt.Sprint(st.ExpiredPending), "past expires_at, awaiting the expiry sweep"},
		{"pending", fmt.Sprint(st.Pending), "the four above"},
		{"dead", fmt.Sprint(st.Dead), "awaiting an operator (reliar dead list)"},
	}
	lines := Table(rows, 2)
	lines = append(lines, fmt.Sprintf("oldest due row waiting %s, as of %s", FormatDuration(st.OldestDueAge), st.AsOf.UTC().Format(time.RFC3339)))
	return lines
}

// StatsSummary is reliar stats' last line.
func StatsSummary(st outbox.Stats) string {
	return fmt.Sprintf("stats: pending=%d due=%d leased=%d scheduled=%d expired_pending=%d dead=%d oldest_due_age=%s",
		st.Pending, st.Due, st.Leased, st.Scheduled, st.ExpiredPending, st.Dead, FormatDuration(st.OldestDueAge))
}
