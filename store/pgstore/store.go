package pgstore

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

// Store is the PostgreSQL outbox store. It implements outboxdriver.Store,
// outboxdriver.Notifier and outboxdriver.MaintenanceLocker over a pool the host owns. It
// is safe for concurrent use.
type Store struct {
	pool *pgxpool.Pool
	cfg  config
	n    names
	sql  statements
	log  *slog.Logger
	// wake is the one notification listener every Wakeups call shares.
	wake outboxdriver.WakeHub
	// ho holds the hand-off subscription and the enqueues waiting for
	// their commit's proof (handoff.go).
	ho outboxdriver.HandoffBook
	// pooled: the pool reaches PostgreSQL through a transaction pooler
	// (pooler.go), so the store never LISTENs.
	pooled bool
}

var (
	_ outboxdriver.Store             = (*Store)(nil)
	_ outboxdriver.Notifier          = (*Store)(nil)
	_ outboxdriver.MaintenanceLocker = (*Store)(nil)
	_ outboxdriver.Handoffer         = (*Store)(nil)
)

// querier is what pools, connections and transactions have in common.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// New returns a store over pool. It checks that the schema is migrated to
// SchemaVersion (else a *NotMigratedError) and warns when a table named outbox
// also exists in another schema, where an unqualified reference from other
// code could land. The library never reads DATABASE_URL: the pool is yours.
func New(ctx context.Context, pool *pgxpool.Pool, opts ...Option) (*Store, error) {
	if pool == nil {
		return nil, fmt.Errorf("%w: nil pool", ErrInvalidOption)
	}
	cfg, err := applyOptions(opts)
	if err != nil {
		return nil, err
	}
	n, err := newNames(cfg.schema)
	if err != nil {
		return nil, err
	}
	have, err := schemaVersion(ctx, pool, n)
	if err != nil {
		return nil, wrapErr("check schema version", err)
	}
	if have < SchemaVersion {
		return nil, &NotMigratedError{Store: "pgstore", Schema: cfg.schema, Have: have, Want: SchemaVersion}
	}
	pooled, err := behindPooler(ctx, pool)
	if err != nil {
		return nil, wrapErr("check for a pooler", err)
	}
	if err := checkQueryMode(pool, pooled, cfg); err != nil {
		return nil, err
	}
	s := &Store{pool: pool, cfg: cfg, n: n, sql: newStatements(n, cfg), log: cfg.logger, pooled: pooled}
	if err := s.warnSameNamedTables(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// warnSameNamedTables logs the other schemas that hold a table named outbox.
func (s *Store) warnSameNamedTables(ctx context.Context) error {
	rows, err := s.pool.Query(ctx, `SELECT n.nspname FROM pg_catalog.pg_class c
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
WHERE c.relname = 'outbox' AND c.relkind IN ('r', 'p') AND n.nspname <> $1
ORDER BY n.nspname LIMIT 20`, s.n.schema)
	if err != nil {
		return wrapErr("look for other outbox tables", err)
	}
	others, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return wrapErr("look for other outbox tables", err)
	}
	if len(others) > 0 {
		s.log.Warn("pgstore: a table named outbox also exists in other schemas; this store uses only its own, schema-qualified",
			slog.String("schema", s.n.schema), slog.Any("other_schemas", others))
	}
	return nil
}

// Schema returns the schema that holds the store's outbox table.
func (s *Store) Schema() string { return s.n.schema }

// Channel returns the LISTEN/NOTIFY channel of the store's table.
func (s *Store) Channel() string { return s.n.channel }

// Capabilities reports per-key ordering, notifications (unless WithoutNotify
// or Pooled), the maintenance lock, tenant fairness and hand-offs (unless
// WithoutHandoff, WithoutNotify or Pooled).
func (s *Store) Capabilities() outboxdriver.Capabilities {
	return outboxdriver.Capabilities{PerKeyOrdering: true, Notify: s.listens(), MaintenanceLock: true, TenantFairness: true, Handoff: s.handoffOn(), ClaimAfter: true}
}

// listens reports whether the store LISTENs for its notifications.
func (s *Store) listens() bool { return !s.cfg.noNotify && !s.pooled }

// txKind tells the store's own transactions apart: only claims and outcome
// writes may commit asynchronously.
type txKind int

const (
	// adminTx is every other statement on the store's pool: reads, purges,
	// dead-letter operations, the inbox's purge.
	adminTx txKind = iota
	// dispatchTx is a claim (with its poison sweep), an outcome write or a
	// lease renewal.
	dispatchTx
)

// batch is a pipelined batch whose first statement, the prelude, may set
// the transaction's statement timeout and commit mode.
type batch struct {
	pgx.Batch
	prelude bool
}

// Preludes: set_config(..., true) is SET LOCAL, so it lasts only for the
// batch's implicit transaction.
//
// Every dispatch transaction turns sequential scans off. Its statements
// find rows by primary key (outcome writes, renewals) or walk the pending
// index (claims); a scan of the whole table is never the right plan, but the
// planner picks one when the table's statistics are stale or absent: a
// fresh or fast-growing outbox, before autovacuum has analyzed it, looks a
// few hundred rows small, and a generic plan made then stays cached on the
// connection, and keeps scanning the whole table as it grows
// (BENCHMARKS.md, "The claim path", has the drain probe's figures).
const (
	setTimeout = "SELECT pg_catalog.set_config('statement_timeout', $1, true)"

	noSeqScan             = "SELECT pg_catalog.set_config('enable_seqscan', 'off', true)"
	noSeqScanAsync        = "SELECT pg_catalog.set_config('enable_seqscan', 'off', true), pg_catalog.set_config('synchronous_commit', 'off', true)"
	noSeqScanTimeout      = "SELECT pg_catalog.set_config('enable_seqscan', 'off', true), pg_catalog.set_config('statement_timeout', $1, true)"
	noSeqScanTimeoutAsync = "SELECT pg_catalog.set_config('enable_seqscan', 'off', true), pg_catalog.set_config('statement_timeout', $1, true), pg_catalog.set_config('synchronous_commit', 'off', true)"
)

// newBatch starts a pipelined batch on the store's pool. Its first
// statement, the prelude, sets the batch's implicit transaction up in the
// same round trip: the statement timeout when one is configured, and for a
// dispatch transaction no sequential scans and, with asynchronous commit,
// the commit mode.
func (s *Store) newBatch(kind txKind) *batch {
	b := &batch{prelude: true}
	timeout := strconv.FormatInt(s.cfg.statementTimeout.Milliseconds(), 10)
	hasTimeout := s.cfg.statementTimeout > 0
	switch {
	case kind != dispatchTx && hasTimeout:
		b.Queue(setTimeout, timeout)
	case kind != dispatchTx:
		b.prelude = false
	case hasTimeout && s.cfg.asyncCommit:
		b.Queue(noSeqScanTimeoutAsync, timeout)
	case hasTimeout:
		b.Queue(noSeqScanTimeout, timeout)
	case s.cfg.asyncCommit:
		b.Queue(noSeqScanAsync)
	default:
		b.Queue(noSeqScan)
	}
	return b
}

// send runs b in one round trip and hands its results, past the prelude,
// to read.
func (s *Store) send(ctx context.Context, b *batch, read func(pgx.BatchResults) error) error {
	br := s.pool.SendBatch(ctx, &b.Batch)
	if b.prelude {
		if _, err := br.Exec(); err != nil {
			_ = br.Close()
			return err
		}
	}
	err := read(br)
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return err
}

// exec runs one statement in a transaction of the given kind and returns
// the rows it affected.
func (s *Store) exec(ctx context.Context, kind txKind, op, sql string, args ...any) (int64, error) {
	b := s.newBatch(kind)
	b.Queue(sql, args...)
	var affected int64
	err := s.send(ctx, b, func(br pgx.BatchResults) error {
		tag, err := br.Exec()
		affected = tag.RowsAffected()
		return err
	})
	return affected, wrapErr(op, err)
}

// logShortfall notes, at debug, outcome writes that matched fewer rows than
// asked: their leases were lost, which is expected, not an error.
func (s *Store) logShortfall(ctx context.Context, op string, asked int, affected int64) {
	if affected < int64(asked) {
		s.log.DebugContext(ctx, "pgstore: fewer rows affected than asked; leases lost to a reclaim",
			slog.String("op", op), slog.Int("asked", asked), slog.Int64("affected", affected))
	}
}
