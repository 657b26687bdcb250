// Package pgstore is the PostgreSQL outbox store: the table, its migrations,
// Enqueue for the application's transactions, the outboxdriver.Store the
// dispatcher claims from, and the consumers' inbox. It runs on pgx v5 over
// a *pgxpool.Pool that the host owns; the library never reads DATABASE_URL.
//
// # Setting up
//
// [Migrate] creates (or brings up to date) the outbox and inbox tables in a
// schema of your choice ([WithSchema]; "public" by default) — it takes the
// same options as [New], so one option list migrates and dispatches one
// table; it is idempotent and safe to
// run from every instance at start-up. Teams that run their migrations with
// golang-migrate, goose or Atlas take the SQL files from [Migrations]
// instead (goose needs its "-- +goose Up" annotations added
// around them). Migrations only add to the schema, so a new release can be
// migrated while instances of the previous one still run. [New] then checks
// the schema version and returns *[NotMigratedError] when it is behind. Schema names are plain identifiers
// ([ValidateSchema]) and every statement names the table schema-qualified and
// quoted, so the session's search_path never matters.
//
// # Migrations
//
// Migrate never blocks a live table for longer than a catalog change. Each
// migration runs as steps on one connection that holds a session-level
// advisory lock (concurrent Migrate calls wait for it by polling, so that
// none holds a snapshot a concurrent index build would wait for). A step is
// its own transaction with a one-second lock_timeout, retried while the
// lock it needs is taken, so that readers and writers never queue behind an
// ALTER TABLE waiting for a long transaction; a step marked
// "-- reliar:step no-transaction" in its file, such as CREATE INDEX
// CONCURRENTLY, runs outside any transaction, and an index such a step left
// INVALID when it was interrupted is dropped and built again. Constraints
// are added NOT VALID in one step and validated in a later one, a scan that
// blocks neither reads nor writes. Every step can run again, and each
// migration records its version in its last step, so an interrupted
// Migrate is finished by the next one. Tools that apply [Migrations]
// themselves should commit each step before the next (goose: a file per
// no-transaction step, with "-- +goose NO TRANSACTION").
//
// Producers keep committing while Migrate upgrades a large table, where
// the same file applied as one transaction would hold its lock through the
// validation and stall them; see BENCHMARKS.md for the commit latencies
// measured during a migration of a million rows.
//
// # Rows written with plain SQL
//
// Schema version 4 refuses what no claim can read: an infinite time (a
// timestamptz column accepts 'infinity', which Go cannot hold: one such row
// used to fail every claim that met it, and the healthy rows claimed with it
// went dead unpublished), a message_version outside 1-65535 (never
// published as another version) and a negative counter. Counters saturate
// at the top of integer instead of overflowing. The upgrade repairs the
// rows already stored: a value with an equivalent finite one takes it, a
// pending row whose content has none goes dead as undecodable, last_error
// saying what each held. Everything else a claim cannot decode (metadata or
// headers of the wrong shape, an unknown metadata_version) is poison: moved
// to dead as undecodable by the claim, while the rest of the claim is
// published.
//
// Rows imported from another cluster (a dump, logical replication) must
// not bring their xid: per-key claims wait for a row's xid to be older than
// every running transaction, so an xid this cluster has not reached blocks
// its key until the counter catches up. Leave xid out of the column list so
// that its default applies, or repair the rows afterwards:
// [Store.RepairXIDs], or `reliar repair xids`, gives every unpublished row
// ahead of the counter an id of this cluster. [Store.XIDAhead] counts such
// rows and the keys they block; `reliar doctor` and `reliar stats` report
// them, and the relay logs them and exports them as a gauge.
//
// Row-level security on the outbox table hides rows from a role its
// policies filter: a claim never sees them, and under per-key ordering a
// hidden older row of a key lets its newer rows go first.
// [Store.RowSecurity] reads the policies that apply to the store's role;
// the relay refuses per-key ordering when they may hide rows, and `reliar
// doctor` reports them. Exempt the dispatchers' role (BYPASSRLS, or a
// policy USING (true) for it).
//
// # Enqueueing inside your transaction
//
// [Store.Enqueue] takes a pgx.Tx, [Store.EnqueueSQL] a *sql.Tx of pgx's
// database/sql driver (github.com/jackc/pgx/v5/stdlib). Neither takes a pool
// or a connection: a message written outside the business transaction could
// commit without the change that caused it, or the change without the
// message. Any number of messages of any types goes in one round trip.
// Getting the transaction from common libraries:
//
//   - pgx: pool.Begin(ctx), or pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {...}).
//   - sqlc (sql_package "pgx/v5"): begin a pgx.Tx, run your queries through
//     queries.WithTx(tx) and pass the same tx to Enqueue before committing.
//   - GORM (gorm.io/driver/postgres, which runs on pgx's stdlib driver):
//     inside db.Transaction(func(tx *gorm.DB) error {...}),
//     tx.Statement.ConnPool is the *sql.Tx of the transaction:
//     sqlTx, ok := tx.Statement.ConnPool.(*sql.Tx), then EnqueueSQL(ctx, sqlTx, ...).
//   - ent: open the *sql.DB with pgx's driver (stdlib.OpenDBFromPool or
//     sql.Open("pgx", dsn)), begin the *sql.Tx yourself, build a client that
//     runs on it with ent.NewClient(ent.Driver(entsql.NewDriver(dialect.Postgres,
//     entsql.Conn{ExecQuerier: sqlTx}))), make your changes through that
//     client, call EnqueueSQL(ctx, sqlTx, ...) and commit sqlTx.
//
// Producers in other languages insert with plain SQL: only id, message_type
// and payload are required. [EnableNotifyTrigger] installs a statement-level
// trigger that wakes the dispatchers for such inserts.
//
// # Wake-ups and ordering
//
// Enqueue issues pg_notify inside the caller's transaction, delivered at
// commit; [Store.Wakeups] listens on a dedicated connection — one per
// store, shared by every dispatcher that subscribes, so that the number of
// dispatchers never multiplies connections —, and a dispatcher claims
// right after a commit instead of waiting for its next poll (up to its
// IdlePollInterval, 1 s by default, when idle). The price: PostgreSQL takes
// a cluster-wide lock while a notifying transaction commits, so notifying
// commits do not share WAL flushes with each other. Concurrent producers
// of single-message transactions commit markedly fewer per second with
// notifications than without; with many messages per transaction the
// difference is within the noise (see BENCHMARKS.md for the figures).
// Notifications are therefore on by default: they cost only producers that
// commit thousands of single-message transactions per second concurrently,
// and save every message a poll interval. [WithoutNotify] turns them off for those producers (pair it
// with a short PollInterval and IdlePollInterval on the dispatchers).
//
// Behind a transaction pooler (PgBouncer in transaction mode, pgcat,
// Supavisor) no session state lasts beyond a transaction. New finds such a
// pooler ([BehindPooler]) and then listens for nothing and hands nothing
// off (Capabilities reports neither Notify nor Handoff; the dispatchers
// poll); it refuses a pool in pgx's default mode, cache_statement, whose
// named prepared statements another client's transaction would meet
// ([ErrPreparedStatementsPooled]; PgBouncer 1.21+ with
// max_prepared_statements: [WithPreparedStatementsThroughPooler]), and in
// describe_exec mode ([ErrDescribeExecPooled]): set
// default_query_exec_mode=cache_describe, exec or simple_protocol on the
// pool. Every mode works on a direct connection. [Migrate] needs a direct
// connection ([ErrNeedsDirectConnection]). The maintenance lock is a lease
// row ([Store.TryLockMaintenance]), which holds nothing on a connection.
//
// Per-key ordering claims only the head row of each ordering key (its
// pending row of lowest sequence) and only rows whose transaction id is
// below the cluster's snapshot xmin, so that no transaction that took its
// id earlier is still running. For two rows r1 and r2 of one key, r1
// inserted first (lower sequence), the guarantee is:
//
//   - r1 is published before r2 when both are in one transaction, or when
//     r1's transaction committed before r2 was inserted: causal order, so
//     a producer that serialises the writes of a key (a lock on the
//     business row, one writer per key) sees its order kept.
//   - When their transactions overlap (both open at once), r2 can go first
//     only when its transaction took its id before r1's did and committed
//     while r1's was still open; the two are then published in commit
//     order. Otherwise, and whenever both committed before a dispatcher
//     looked at the key, sequence order.
//
// Every pair of rows of a key is thus published in sequence order or in
// commit order, and never against causal order. Sequence order itself
// cannot be promised across overlapping transactions: the sequence is
// taken at insert, visibility comes at commit. Ordering a key's rows by
// (transaction id, sequence) instead was tried and rejected: it makes the
// order independent of when a dispatcher looks, but it reverses causal
// order when a transaction takes its id (with an earlier write) and then
// waits for another transaction of the same key to commit. The cost of the
// xmin gate: any long-open write transaction anywhere in the cluster holds
// ordered rows back until it ends, and so does a row whose xid is ahead of
// the cluster's counter (see Rows written with plain SQL). Rows without a
// key are not affected. A head past expires_at without a live lease can
// never be published and blocks nothing.
//
// # Claims under a backlog
//
// A claim walks the pending partial index from its head. The rows the
// claims before it leased stay in that index until their outcome is
// written (the claim's update is heap-only), and each costs the walk a heap
// fetch before the claim refuses it: 512 of them took a claim of 512 rows
// from 3.4 to 4.2 ms. The store therefore reports the ClaimAfter
// capability: right after a full claim, a dispatcher's next claim starts
// after that claim's last (available_at, sequence), a row comparison the
// index scan starts from; one claim per PollInterval, and the one after a
// short claim from a position, starts from the head again, for the rows
// that became due behind it. Per-key and plain claims both do this; fair
// claims walk the tenant index and do not.
//
// # The zero-claim path
//
// While a dispatcher runs on the store in the same process (the dispatcher
// subscribes through [Store.Handoff] when it subscribes to wake-ups),
// Enqueue inserts each eligible row already leased to it and notifies with
// a token naming the enqueue; the listener hands the rows to the dispatcher
// when that notification arrives, which can only happen after the
// producer's commit. Neither a claim statement nor its WAL flush then
// sits between the commit and the publish: in the peer harness the idle
// latency went from p50 1.26 / p99 6.13 ms to 0.06 / 0.33 ms (BENCHMARKS.md,
// "The zero-claim path"). The rules that keep the delivery guarantee:
//
//   - The lease is computed with clock_timestamp() at the statement, not
//     now() (the transaction's start), and a hand-off that finds less than
//     the dispatcher's PublishTimeout of lease left (measured from before
//     the statement was sent, on this process's clock) is dropped.
//   - Rows with an ordering key, an AvailableAt, an ExpiresAt, and rows
//     with a tenant when the dispatcher caps tenants, are never leased at
//     enqueue; a dispatcher with tenant fairness takes no hand-offs.
//   - Rows leased at enqueue count toward the dispatcher's MaxInFlight
//     from the enqueue on (a dispatcher without room gets none) until
//     they are handed over, or for outboxdriver.HandoffReserveFor (100 ms)
//     when no proof comes: a rolled-back transaction never sends one, and
//     must not hold the dispatcher's room for a lease. A proof that comes
//     later still hands the rows over. Once handed over they are renewed,
//     written and released at the drain like claimed rows.
//   - A row never handed over — its transaction rolled back (then it does
//     not exist), its notification lost while the listener reconnected,
//     the process killed between the commit and the hand-off, the
//     dispatcher stopped first — keeps its lease until it lapses and is
//     then claimed by any dispatcher as a lapsed claim (lapsed_claims
//     counts it, and MaxClaims applies). The chaos suite's S9 kills such a
//     producer with its listener cut.
//
// Only [Store.Enqueue] leases at enqueue, not [Store.EnqueueSQL]; a store
// value serves one dispatcher's hand-offs (the others of the process
// claim); [WithoutHandoff] and [WithoutNotify] turn the path off. A relay
// in another process than the producers gains nothing from it and loses
// nothing.
//
// # Fair claims across tenants
//
// A dispatcher with Fairness FairnessTenant shares every claim among the
// tenants with pending rows (tenant_id; rows without one form the tenant
// ""). PostgreSQL 15 has no skip scan, so the claim enumerates tenants
// with a recursive CTE over the index of schema version 5,
// outbox_tenant_pending_idx (the tenant_id or the empty string, in "C" order,
// available_at, sequence) over pending rows: one index descent per tenant,
// starting after the cursor the dispatcher carries from its previous
// claim, wrapping around, and visiting at most BatchSize tenants. For each
// visited tenant one LATERAL index scan locks (SKIP LOCKED) its first
// claimable rows, at most its share (twice an even share of the batch) and
// what the per-tenant cap leaves it; the rows are ranked round-robin and
// the first BatchSize are leased like any claim's. A claim therefore costs
// at most BatchSize index descents and about twice BatchSize rows, at any
// number of tenants and any backlog, and never scans the table. The index
// costs every enqueue one more index entry (BENCHMARKS.md). A fair claim
// cannot be combined with PerKey ordering. [Store.TenantStats] lists the
// tenants with due rows for operators; it reads every due row.
//
// # Commit modes and table size
//
// Every transaction of the store's own commits synchronously by default.
// [WithAsyncCommit] sends SET LOCAL synchronous_commit = off with every claim
// and outcome write, in the same round trip, so that they no longer wait
// for a WAL flush. A claim's flush is most of its time when the system is
// idle and most of the idle latency's tail when other processes flush, so
// WithAsyncCommit lowers both the median and the tail of the idle latency
// while drain throughput stays within the noise on long drains (see
// BENCHMARKS.md for the figures). It is not the default because a crash of
// the database server then turns the rows in flight into duplicates that
// look like first deliveries (see the option), where synchronous claims let the
// dispatchers finish them after the restart without a duplicate.
//
// [WithDeleteOnComplete] deletes rows as they are published instead of
// marking them: the table then holds only pending and dead rows and
// needs no retention purge of published ones, at the price of having no
// record of published messages to audit. Stats and the dead letters read
// neither, so they are unaffected. Drain throughput did not change beyond
// the noise.
//
// The outbox table fills its pages to half (schema version 3), so that the
// row update of a claim usually stays on its page and writes no index
// entry; pending rows take about twice the space. Claims, outcome writes
// and renewals run with sequential scans turned off for their transaction:
// they only ever want their indexes, and a plan a connection cached while
// the table was small would otherwise keep scanning the whole table as it
// grows. BENCHMARKS.md has the measurements of both.
//
// # Inbox
//
// [Store.Inbox] returns an inbox.Marker[pgx.Tx], [Store.InboxSQL] an
// inbox.Marker[*sql.Tx] for pgx's database/sql driver: a consumer records
// each message it processes in the processed_messages table (schema version
// 2, in the same schema as the outbox), inside the same transaction as the
// message's business effect, and inbox.Process skips a message already
// recorded. The record is an INSERT … ON CONFLICT DO NOTHING; one inserted
// row means a first delivery, none a duplicate. A delivery racing another
// delivery of the same message waits on the primary key until the other's
// transaction ends, then reports a duplicate (it committed) or records the
// message itself (it rolled back); under REPEATABLE READ or SERIALIZABLE the
// first case is a transient serialization failure instead, and the retried
// delivery finds the record. The consumer's transaction may be on another
// database than the producer's outbox: the inbox needs only the migrated
// schema there.
//
// Records are kept for a retention period and then deleted by
// [Inbox.PurgeProcessed], in bounded batches, oldest first, never a record
// younger than the retention (inbox.DefaultRetention, 14 days, unless the
// caller says otherwise). The retention must exceed the broker's redelivery
// horizon, the longest time after which a message can still be delivered
// again (JetStream's MaxAge and consumer redelivery, Kafka's retention, a
// RabbitMQ queue's message TTL, a producer's own retries): a delivery that
// arrives after its record was purged is processed again. Records carry the
// server's clock, the start time of the consumer's transaction.
//
// # Errors
//
// Errors wrap the driver's (*pgconn.PgError stays reachable with errors.As).
// SQLSTATEs that fail the same way when retried (classes 42 and 28, 3F000,
// 3D000, 0A000) are marked permanent for reliar.IsPermanent; everything else,
// connection loss and context deadlines included, is transient.
package pgstore
