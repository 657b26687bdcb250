// Package pgstore is the PostgreSQL outbox store: the table, its migrations,
// Enqueue for the application's transactions, the outbox.Store the
// dispatcher claims from, and the consumers' inbox. It runs on pgx v5 over
// a *pgxpool.Pool that the host owns; the library never reads DATABASE_URL.
//
// # Setting up
//
// [Migrate] creates (or brings up to date) the outbox and inbox tables in a
// schema of your choice, "public" by default; it is idempotent and safe to
// run from every instance at start-up. Teams that run their migrations with
// golang-migrate, goose or Atlas take the SQL files from [Migrations] or
// [MigrationsFor] instead (goose needs its "-- +goose Up" annotations added
// around them). Migrations only add to the schema, so a new release can be
// migrated while instances of the previous one still run. [New] then checks
// the schema version and returns *[ErrNotMigrated] when it is behind. Schema names are plain identifiers
// ([ValidateSchema]) and every statement names the table schema-qualified and
// quoted, so the session's search_path never matters.
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
// commit; [Store.Wakeups] listens on a dedicated connection. Notifications
// serialise committing transactions inside PostgreSQL; [WithoutNotify] turns
// them off (and is needed behind PgBouncer in transaction pooling mode,
// where LISTEN does not work). Dispatchers then rely on polling.
//
// Per-key ordering claims only the head row of each ordering key, and only
// rows whose transaction is older than every transaction still running in
// the cluster (pg_snapshot_xmin), so that a row whose transaction commits
// late is never overtaken by a later row of its key. The cost: any long-open
// write transaction anywhere in the cluster holds ordered rows back until it
// ends. Rows without a key are not affected.
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
