package doctor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/reliar/reliar/store/pgstore"
)

// The outbox table's indexes, as migrations 1 and 5 create them.
const (
	PendingIndex   = "outbox_pending_idx"
	PendingKeyIdx  = "outbox_pending_key_idx"
	DeadIndex      = "outbox_dead_idx"
	PublishedIndex = "outbox_published_at_idx"
	DeadAtIndex    = "outbox_dead_at_idx"
	ExpiresIndex   = "outbox_expires_at_idx"
	TenantIndex    = "outbox_tenant_pending_idx" // fair claims (schema version 5)
)

// expectedIndexes lists the indexes the store's statements rely on.
var expectedIndexes = []string{PendingIndex, PendingKeyIdx, DeadIndex, PublishedIndex, DeadAtIndex, ExpiresIndex, TenantIndex}

// names are the quoted names doctor's SQL uses.
type names struct {
	schema, table, migrations string
}

func newNames(schema string) names {
	return names{
		schema:     schema,
		table:      pgx.Identifier{schema, "outbox"}.Sanitize(),
		migrations: pgx.Identifier{schema, "reliar_migrations"}.Sanitize(),
	}
}

// Gather reads the facts about the outbox table in schema. It reads only: the
// EXPLAINs run in a transaction that is rolled back. warnAge counts the
// transactions at least that old in Facts.LongXacts.
func Gather(ctx context.Context, pool *pgxpool.Pool, schema string, warnAge time.Duration, log *slog.Logger) (Facts, error) {
	if err := pgstore.ValidateSchema(schema); err != nil {
		return Facts{}, err
	}
	n := newNames(schema)
	f := Facts{Schema: schema, WantVersion: pgstore.SchemaVersion}
	if err := gatherVersion(ctx, pool, n, &f); err != nil {
		return f, err
	}
	if !f.TableExists || f.Version < f.WantVersion {
		return f, nil
	}
	store, err := pgstore.New(ctx, pool, pgstore.WithSchema(schema), pgstore.WithLogger(log))
	if err != nil {
		return f, fmt.Errorf("open the store: %w", err)
	}
	if f.Stats, err = store.Stats(ctx); err != nil {
		return f, fmt.Errorf("read the store's stats: %w", err)
	}
	steps := []struct {
		what string
		run  func() error
	}{
		{"list the indexes", func() error { return gatherIndexes(ctx, pool, n, &f) }},
		{"check that the server takes the relay's writes", func() error { return gatherWritable(ctx, store, &f) }},
		{"explain the claim", func() error {
			if len(f.Writable.Missing) > 0 {
				return nil // EXPLAIN of an UPDATE needs its privileges
			}
			return gatherPlans(ctx, pool, n, &f)
		}},
		{"find old transactions", func() error { return gatherXacts(ctx, pool, warnAge, &f) }},
		{"read the replication slots", func() error { return gatherSlots(ctx, pool, &f) }},
		{"read the table's statistics", func() error { return gatherTable(ctx, pool, n, &f) }},
		{"find lapsed leases", func() error { return gatherLapsed(ctx, pool, n, &f) }},
		{"count dead rows", func() error { return gatherDead(ctx, pool, n, &f) }},
		{"find rows ahead of the xid counter", func() (err error) { f.XIDAhead, err = store.XIDAhead(ctx); return err }},
		{"read the row-level security", func() (err error) { f.RowSecurity, err = store.RowSecurity(ctx); return err }},
	}
	for _, s := range steps {
		if err := s.run(); err != nil {
			return f, fmt.Errorf("doctor: %s: %w", s.what, err)
		}
	}
	return f, nil
}

func gatherVersion(ctx context.Context, pool *pgxpool.Pool, n names, f *Facts) error {
	var hasMigrations bool
	err := pool.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL, to_regclass($2) IS NOT NULL`,
		n.migrations, n.table).Scan(&hasMigrations, &f.TableExists)
	if err != nil {
		return fmt.Errorf("doctor: look for the outbox table: %w", err)
	}
	if !hasMigrations {
		return nil
	}
	if err := pool.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM `+n.migrations).Scan(&f.Version); err != nil {
		return fmt.Errorf("doctor: read the schema version: %w", err)
	}
	return nil
}

func gatherIndexes(ctx context.Context, pool *pgxpool.Pool, n names, f *Facts) error {
	rows, err := pool.Query(ctx, `SELECT c.relname, i.indisvalid AND i.indisready, pg_relation_size(c.oid)
FROM pg_catalog.pg_index i JOIN pg_catalog.pg_class c ON c.oid = i.indexrelid
WHERE i.indrelid = $1::regclass ORDER BY c.relname`, n.table)
	if err != nil {
		return err
	}
	f.Indexes, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (Index, error) {
		var ix Index
		err := r.Scan(&ix.Name, &ix.Valid, &ix.Bytes)
		return ix, err
	})
	return err
}

// claimSelectSQL is the row selection of the store's claim (pgstore's claim
// CTE), which must walk outbox_pending_idx in (available_at, sequence) order.
const claimSelectSQL = `SELECT c.id FROM %s c
WHERE c.published_at IS NULL AND c.dead_at IS NULL
  AND c.available_at <= now()
  AND (c.locked_until IS NULL OR c.locked_until <= now())
  AND (c.expires_at IS NULL OR c.expires_at > now())
ORDER BY c.available_at, c.sequence
LIMIT 100
FOR UPDATE SKIP LOCKED`

// keyHeadSQL is the per-key claim's lookup of an older pending row of the
// same key, which must use outbox_pending_key_idx.
const keyHeadSQL = `SELECT 1 FROM %s h
WHERE h.ordering_key = 'k'
  AND h.published_at IS NULL AND h.dead_at IS NULL
  AND h.sequence < 1000
  AND (h.expires_at IS NULL OR h.expires_at > now() OR h.locked_until > now())`

// gatherPlans EXPLAINs the claim's statements with sequential scans
// disabled, so that a small table, which PostgreSQL rightly scans, still
// shows whether an index could serve it. The transaction is rolled back.
func gatherPlans(ctx context.Context, pool *pgxpool.Pool, n names, f *Facts) error {
	tx, err := pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	if _, err := tx.Exec(ctx, `SET LOCAL enable_seqscan = off`); err != nil {
		return err
	}
	if f.ClaimPlan, err = explain(ctx, tx, fmt.Sprintf(claimSelectSQL, n.table)); err != nil {
		return err
	}
	f.KeyPlan, err = explain(ctx, tx, fmt.Sprintf(keyHeadSQL, n.table))
	return err
}

func gatherXacts(ctx context.Context, pool *pgxpool.Pool, warnAge time.Duration, f *Facts) error {
	// A transaction pins the horizon with its xid (once it wrote) or its
	// snapshot's xmin. Since PostgreSQL 14 only the database's own
	// backends hold back its tables; prepared transactions hold it until
	// committed or rolled back.
	rows, err := pool.Query(ctx, `WITH open AS (
    SELECT pid, coalesce(usename, '') AS usr, coalesce(application_name, '') AS app,
        coalesce(state, '') AS state, now() - xact_start AS age,
        greatest(coalesce(age(backend_xid), 0), coalesce(age(backend_xmin), 0))::int8 AS xid_age,
        left(coalesce(query, ''), 160) AS query
    FROM pg_catalog.pg_stat_activity
    WHERE datname = current_database() AND pid <> pg_backend_pid() AND xact_start IS NOT NULL
      AND (backend_xid IS NOT NULL OR backend_xmin IS NOT NULL)
    UNION ALL
    SELECT 0, coalesce(owner::text, ''), gid, 'prepared', now() - prepared,
        age(transaction)::int8, ''
    FROM pg_catalog.pg_prepared_xacts WHERE database = current_database()
)
SELECT pid, usr, app, state, extract(epoch FROM age)::float8, xid_age, query,
    count(*) FILTER (WHERE age >= $1::int8 * interval '1 microsecond') OVER ()
FROM open ORDER BY age DESC LIMIT 1`, warnAge.Microseconds())
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			x    Xact
			secs float64
			long int64
		)
		if err := rows.Scan(&x.PID, &x.User, &x.Application, &x.State, &secs, &x.XIDAge, &x.Query, &long); err != nil {
			return err
		}
		x.Age = time.Duration(secs * float64(time.Second))
		f.OldestXact, f.LongXacts = &x, int(long)
	}
	return rows.Err()
}

func gatherSlots(ctx context.Context, pool *pgxpool.Pool, f *Facts) error {
	rows, err := pool.Query(ctx, `SELECT slot_name::text, slot_type, active,
    age(xmin)::int8, age(catalog_xmin)::int8
FROM pg_catalog.pg_replication_slots
WHERE xmin IS NOT NULL OR catalog_xmin IS NOT NULL
ORDER BY slot_name`)
	if err != nil {
		return err
	}
	f.Slots, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (Slot, error) {
		var s Slot
		err := r.Scan(&s.Name, &s.Type, &s.Active, &s.XminAge, &s.CatalogXminAge)
		return s, err
	})
	return err
}

func gatherTable(ctx context.Context, pool *pgxpool.Pool, n names, f *Facts) error {
	t := &f.Table
	err := pool.QueryRow(ctx, `SELECT coalesce(s.n_live_tup, 0), coalesce(s.n_dead_tup, 0),
    s.last_autovacuum, s.last_vacuum,
    pg_relation_size($1::regclass), pg_indexes_size($1::regclass),
    coalesce((SELECT sum(avg_width) FROM pg_catalog.pg_stats
              WHERE schemaname = $2 AND tablename = 'outbox'), 0)::int8,
    coalesce(pg_relation_size(to_regclass($3)), 0),
    (SELECT reltuples FROM pg_catalog.pg_class WHERE oid = $1::regclass)::int8
FROM (SELECT 1) one
LEFT JOIN pg_catalog.pg_stat_user_tables s ON s.relid = $1::regclass`,
		n.table, n.schema, pgx.Identifier{n.schema, PendingIndex}.Sanitize()).Scan(
		&t.LiveTuples, &t.DeadTuples, &t.LastAutovacuum, &t.LastVacuum,
		&t.TableBytes, &t.IndexBytes, &t.RowWidth, &t.PendingIndexBytes, &t.PlannerRows)
	return err
}

func gatherLapsed(ctx context.Context, pool *pgxpool.Pool, n names, f *Facts) error {
	var secs *float64
	err := pool.QueryRow(ctx, `SELECT count(*), extract(epoch FROM now() - min(locked_until))::float8,
    coalesce((array_agg(DISTINCT locked_by))[1:5], '{}')
FROM `+n.table+`
WHERE published_at IS NULL AND dead_at IS NULL
  AND locked_by IS NOT NULL AND locked_until <= now()`).Scan(&f.Lapsed.Count, &secs, &f.Lapsed.Workers)
	if err != nil {
		return err
	}
	if secs != nil {
		f.Lapsed.Oldest = time.Duration(*secs * float64(time.Second))
	}
	return nil
}

func gatherDead(ctx context.Context, pool *pgxpool.Pool, n names, f *Facts) error {
	return pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE dead_at > now() - interval '1 hour'),
    count(*) FILTER (WHERE dead_at <= now() - interval '1 hour')
FROM `+n.table+` WHERE dead_at IS NOT NULL`).Scan(&f.DeadLastHour, &f.DeadBefore)
}

// errNoPlan reports an EXPLAIN that returned no plan.
var errNoPlan = errors.New("EXPLAIN returned no plan")
