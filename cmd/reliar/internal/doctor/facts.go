package doctor

import (
	"time"

	"github.com/reliar/reliar/outbox"
	"github.com/reliar/reliar/store/pgstore"
)

// Facts is what Gather reads from the database.
type Facts struct {
	// Schema is the schema of the outbox table.
	Schema string
	// Version is the schema version recorded in reliar_migrations; 0 when
	// the table is missing.
	Version int
	// WantVersion is the version this build needs (pgstore.SchemaVersion).
	WantVersion int
	// TableExists says whether the outbox table exists. When it does not,
	// or Version is below WantVersion, nothing else was read.
	TableExists bool

	// Indexes are the indexes of the outbox table.
	Indexes []Index
	// ClaimPlan is the plan of the claim's row selection, with sequential
	// scans disabled; KeyPlan the per-key claim's head-row lookup.
	ClaimPlan, KeyPlan Plan
	// OldestXact is the oldest transaction of the database holding back the
	// xmin horizon, other than doctor's own; nil when none.
	OldestXact *Xact
	// LongXacts counts the transactions at least Thresholds.WarnAge old.
	LongXacts int
	// Slots are the replication slots that hold an xmin or catalog_xmin.
	Slots []Slot
	// Table holds the table's statistics and sizes.
	Table Table
	// Lapsed describes the rows whose lease lapsed without a reclaim.
	Lapsed Lapsed
	// Stats are the store's gauges.
	Stats outbox.Stats
	// DeadLastHour and DeadBefore count dead rows by when they went dead.
	DeadLastHour, DeadBefore int64
	// XIDAhead describes the pending rows whose xid is ahead of the
	// cluster's transaction counter (rows restored from another cluster).
	XIDAhead pgstore.XIDAhead
	// RowSecurity is the table's row-level security as it applies to the
	// role doctor connects as.
	RowSecurity pgstore.RowSecurity
	// Writable says whether the relay's claims and outcome writes can run.
	Writable Writable
}

// Index is one index of the outbox table.
type Index struct {
	Name string
	// Valid is false for an index left invalid by a failed CREATE INDEX
	// CONCURRENTLY; the planner never uses it.
	Valid bool
	Bytes int64
}

// Plan is what an EXPLAIN showed.
type Plan struct {
	// Indexes names the indexes the plan reads.
	Indexes []string
	// SeqScan says whether the plan scans the outbox table sequentially.
	SeqScan bool
}

// hasValidIndex reports whether the table has the index, valid.
func (f Facts) hasValidIndex(name string) bool {
	for _, ix := range f.Indexes {
		if ix.Name == name {
			return ix.Valid
		}
	}
	return false
}

// uses reports whether the plan reads index.
func (p Plan) uses(index string) bool {
	for _, i := range p.Indexes {
		if i == index {
			return true
		}
	}
	return false
}

// Xact is an open transaction.
type Xact struct {
	PID         int32
	User        string
	Application string
	// State is pg_stat_activity's: "active", "idle in transaction", ...;
	// "prepared" for a prepared transaction (PID 0).
	State string
	Age   time.Duration
	// XIDAge is how many transaction ids old its xid or xmin is.
	XIDAge int64
	// Query is the start of its current or last statement.
	Query string
}

// Slot is a replication slot holding back a horizon.
type Slot struct {
	Name   string
	Type   string
	Active bool
	// XminAge and CatalogXminAge are the ages in transaction ids of the
	// slot's xmin and catalog_xmin; nil when unset.
	XminAge, CatalogXminAge *int64
}

// Table holds the outbox table's statistics (pg_stat_user_tables) and sizes.
type Table struct {
	LiveTuples, DeadTuples int64
	// LastAutovacuum and LastVacuum are nil when the table was never
	// vacuumed that way.
	LastAutovacuum, LastVacuum *time.Time
	// TableBytes is the heap's size, IndexBytes all its indexes'.
	TableBytes, IndexBytes int64
	// RowWidth is the average row width pg_stats reports; 0 before the
	// table was analyzed.
	RowWidth int64
	// PendingIndexBytes is the size of outbox_pending_idx, 0 when missing.
	PendingIndexBytes int64
	// PlannerRows is the row count the planner's statistics hold
	// (pg_class.reltuples): -1 before the table was first analyzed or
	// vacuumed.
	PlannerRows int64
}

// Lapsed describes pending rows whose lease expired (locked_until past with
// locked_by set) and that no dispatcher has claimed since.
type Lapsed struct {
	Count int64
	// Oldest is how long ago the oldest of those leases expired.
	Oldest time.Duration
	// Workers are the locked_by values of those rows, at most a few.
	Workers []string
}
