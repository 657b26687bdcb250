// Package pgstore is the PostgreSQL outbox store: the table, its migrations,
// Enqueue for the application's transactions, and the outbox.Store the
// dispatcher claims from. It runs on pgx v5 over a *pgxpool.Pool that the
// host owns; the library never reads DATABASE_URL.
//
// # Setting up
//
// [Migrate] creates (or brings up to date) the outbox table in a schema of
// your choice, "public" by default; it is idempotent and safe to run from
// every instance at start-up. Teams that run their migrations with
// golang-migrate, goose or Atlas take the SQL files from [Migrations] or
// [MigrationsFor] instead (goose needs its "-- +goose Up" annotations added
// around them). [New] then checks the schema version and returns
// *[ErrNotMigrated] when it is behind. Schema names are plain identifiers
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
// # Errors
//
// Errors wrap the driver's (*pgconn.PgError stays reachable with errors.As).
// SQLSTATEs that fail the same way when retried (classes 42 and 28, 3F000,
// 3D000, 0A000) are marked permanent for reliar.IsPermanent; everything else,
// connection loss and context deadlines included, is transient.
package pgstore
