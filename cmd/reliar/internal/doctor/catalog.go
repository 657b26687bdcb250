package doctor

import (
	"fmt"
	"strings"
)

// CheckHelp is one check as doctor --help describes it.
type CheckHelp struct {
	Name string
	// Help says what the check looks at, in a few words.
	Help string
}

// Catalog lists every check Evaluate returns, in its order, with what each
// looks at: doctor --help is written from it, so the help never lists a
// check the command does not make, or misses one it makes.
func Catalog() []CheckHelp {
	return []CheckHelp{
		{CheckSchema, "reliar_migrations against the version this release needs"},
		{CheckIndexes, fmt.Sprintf("the store's %d indexes present and valid", len(expectedIndexes))},
		{CheckClaimPlan, "EXPLAIN of the claim, sequential scans disabled (in a rolled-back transaction), so a small healthy table is ok; not judged before the table's statistics count 1,000 rows (a fresh table), unless an index is missing"},
		{CheckOldestXact, "the oldest open or prepared transaction of the database holding back the xmin horizon"},
		{CheckSlots, "slots holding an xmin or catalog_xmin"},
		{CheckDeadTuples, "pg_stat_user_tables' dead tuples and last (auto)vacuum"},
		{CheckSize, "heap and index size against the live rows"},
		{CheckLapsed, "pending rows whose lease lapsed and was never reclaimed"},
		{CheckOldestDue, "how long due rows have waited for a claim"},
		{CheckDeadLetters, "rows dead in the last hour against those before"},
		{CheckXIDAhead, "pending rows whose xid is ahead of this cluster's counter (restored from another cluster): red when they block per-key claims on some key (reliar repair xids fixes them); unordered and fair claims take them"},
		{CheckRowSecurity, "row-level security on the table: red when its policies may hide rows from the role doctor runs as (run it as the relay's role), a warning when they apply to other roles only"},
		{CheckWritable, "the server takes writes (not a standby, not read-only by default) and the role may claim, record outcomes and purge: red otherwise, as the relay's /readyz is 503"},
	}
}

// CatalogText is the catalog as doctor --help shows it: a name column, and
// the help wrapped at width columns.
func CatalogText(width int) string {
	const indent, col = 2, 22
	var b strings.Builder
	for _, c := range Catalog() {
		line := strings.Repeat(" ", indent) + c.Name
		line += strings.Repeat(" ", max(col-len(line), 1))
		for _, word := range strings.Fields(c.Help) {
			if len(line)+1+len(word) > width && strings.TrimSpace(line) != "" && len(line) > col {
				b.WriteString(strings.TrimRight(line, " ") + "\n")
				line = strings.Repeat(" ", col)
			}
			if !strings.HasSuffix(line, " ") {
				line += " "
			}
			line += word
		}
		b.WriteString(strings.TrimRight(line, " ") + "\n")
	}
	return b.String()
}
