// Package mysqlstore is the MariaDB outbox store (MariaDB 10.6 or later; the
// SQL also runs on MySQL 8, where the dialects agree, but only MariaDB is
// tested).
//
// # Opening the database
//
// The store works on a *sql.DB of github.com/go-sql-driver/mysql that the
// application owns. Its DSN must set parseTime=true and keep the default
// loc=UTC; [New] checks both. For example:
//
//	app:secret@tcp(db:3306)/app?parseTime=true
//
// # Schema
//
// [Migrate] creates the outbox table and records the applied version in the
// reliar_migrations table; it is idempotent and serialised across processes
// by GET_LOCK. [Migrations] exposes the same SQL for teams that run their own
// migration tool. [New] refuses an older schema with a *[NotMigratedError].
//
// Times are DATETIME(6) in UTC and come from the server's clock
// (UTC_TIMESTAMP(6)), never the application's. MariaDB has no partial
// indexes, so generated columns that are NULL once a row is published or dead
// stand in for them: the claim, the stats and the expiry sweep read pending
// rows only.
//
// # Claims and locks
//
// A claim is one READ COMMITTED transaction: SELECT … FOR UPDATE SKIP LOCKED
// picks the due rows (concurrent claimers skip each other's rows instead of
// waiting), then an UPDATE leases them with a fresh token each (MariaDB has
// no UPDATE … RETURNING). READ COMMITTED takes no gap locks, so claims and
// purges never block the application's inserts. Outcome writes are single
// statements fenced by id and lease token.
//
// Per-key ordering is not offered: without an equivalent of PostgreSQL's
// transaction snapshot, a row whose transaction commits late could be
// overtaken by a later row of its key. The store implements
// outbox.MaintenanceLocker with GET_LOCK.
//
// # Enqueue
//
// [Store.Enqueue] takes only a *sql.Tx: a message must commit or roll back
// together with the business change that caused it.
package mysqlstore
