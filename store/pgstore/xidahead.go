package pgstore

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
)

// XIDAhead describes the rows whose transaction id (the xid column) this
// cluster has not reached yet: rows copied with their xid from another
// cluster, by a dump restored elsewhere or by logical replication of the
// outbox table. A per-key claim takes a keyed row only once its xid is older
// than every running transaction, so such a row, and every later row of its
// key, waits until the cluster has used that many transaction ids. Rows
// without an ordering key are claimed as usual, and so are all rows by
// claims without per-key ordering. [Store.RepairXIDs] gives the rows an id
// of this cluster.
type XIDAhead struct {
	// Rows counts the pending rows whose xid is ahead of the cluster's
	// counter.
	Rows int64
	// Keys counts the ordering keys of those rows: the keys a per-key
	// claim cannot take.
	Keys int64
	// BlockedDue counts the due rows a per-key claim cannot take because
	// of them: each keyed row ahead and every later row of its key, among
	// the rows Stats counts as due.
	BlockedDue int64
	// MaxAhead is how many transaction ids the furthest row is ahead.
	MaxAhead int64
	// Oldest is how long ago the oldest of the rows was created.
	Oldest time.Duration
	// Sample names up to five of the blocked keys, in key order.
	Sample []string
}

// xidAheadSQL finds the pending rows whose xid is at or above the xmax of
// a fresh snapshot: ids no transaction of this cluster has taken yet.
// Reading the snapshot takes no transaction id. The head of each blocked
// key is its lowest sequence ahead; rows of the key before it are not
// blocked by it.
const xidAheadSQL = `WITH s AS (SELECT pg_snapshot_xmax(pg_current_snapshot()) AS xmax),
ahead AS (
    SELECT o.ordering_key, o.sequence, o.xid, o.created_at
    FROM {{table}} o, s
    WHERE o.published_at IS NULL AND o.dead_at IS NULL AND o.xid >= s.xmax
),
heads AS (
    SELECT ordering_key, min(sequence) AS first
    FROM ahead WHERE ordering_key IS NOT NULL GROUP BY ordering_key
)
SELECT (SELECT count(*) FROM ahead),
    (SELECT count(*) FROM heads),
    (SELECT count(*) FROM heads h JOIN {{table}} o ON o.ordering_key = h.ordering_key
        WHERE o.published_at IS NULL AND o.dead_at IS NULL AND o.sequence >= h.first
          AND o.available_at <= now()
          AND (o.locked_until IS NULL OR o.locked_until <= now())
          AND (o.expires_at IS NULL OR o.expires_at > now())),
    coalesce((SELECT max(xid::text::numeric) FROM ahead) - (SELECT xmax::text::numeric FROM s), 0)::int8,
    coalesce(extract(epoch FROM now() - (SELECT min(created_at) FROM ahead)), 0)::float8,
    coalesce((SELECT array_agg(ordering_key) FROM (SELECT ordering_key FROM heads ORDER BY ordering_key LIMIT 5) k), '{}')`

// XIDAhead reports the pending rows whose xid this cluster has not reached
// (see [XIDAhead]). It reads every pending row once, through the pending
// index, so it is meant for an occasional check (the relay runs it once a
// minute), not for a loop.
func (s *Store) XIDAhead(ctx context.Context) (XIDAhead, error) {
	var x XIDAhead
	var secs float64
	err := s.readTx(ctx, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, s.n.render(xidAheadSQL)).Scan(&x.Rows, &x.Keys, &x.BlockedDue, &x.MaxAhead, &secs, &x.Sample)
	})
	if err != nil {
		return XIDAhead{}, wrapErr("find rows ahead of the xid counter", err)
	}
	x.Oldest = time.Duration(secs * float64(time.Second))
	return x, nil
}

// repairXIDsSQL gives up to $1 rows ahead of the counter the xid of the
// statement's own transaction. The rows are chosen under the statement's
// snapshot, taken before that xid exists; once it commits, the next
// statement's snapshot is past it, so no row is chosen twice.
const repairXIDsSQL = `UPDATE {{table}} o SET xid = pg_current_xact_id()
WHERE o.id IN (
    SELECT a.id FROM {{table}} a
    WHERE a.published_at IS NULL
      AND a.xid >= pg_snapshot_xmax(pg_current_snapshot())
    LIMIT $1)`

// DefaultRepairBatch is how many rows one statement of RepairXIDs changes
// when it is given no batch size.
const DefaultRepairBatch = 10_000

// RepairXIDs gives every unpublished row (pending or dead, so that a dead
// row retried later does not bring the block back) whose xid this cluster
// has not reached the id of a transaction of this cluster, so that per-key
// claims take them again. It changes nothing else: their order within a
// key is their sequence, as before. It works in statements of at most
// batch rows (DefaultRepairBatch when batch <= 0), each its own
// transaction, and returns how many rows it changed. Running it again
// changes nothing; it is safe while dispatchers run.
func (s *Store) RepairXIDs(ctx context.Context, batch int) (int64, error) {
	if batch <= 0 {
		batch = DefaultRepairBatch
	}
	var total int64
	for {
		n, err := s.exec(ctx, adminTx, "repair rows ahead of the xid counter", s.n.render(repairXIDsSQL), batch)
		total += n
		if err != nil || n < int64(batch) {
			return total, err
		}
	}
}

// readTx runs read in a read-only transaction that uses the store's
// statement timeout and no sequential scans, so that a check of pending
// rows walks the pending index instead of reading the published rows too.
func (s *Store) readTx(ctx context.Context, read func(pgx.Tx) error) error {
	return pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, noSeqScan); err != nil {
			return err
		}
		if t := s.cfg.statementTimeout; t > 0 {
			if _, err := tx.Exec(ctx, setTimeout, strconv.FormatInt(t.Milliseconds(), 10)); err != nil {
				return fmt.Errorf("set statement timeout: %w", err)
			}
		}
		return read(tx)
	})
}
