// Package outboxtest helps users of Reliar test their own code: the code
// that enqueues messages inside its transactions, and the code around a
// dispatcher.
//
//   - RequireEnqueued, RequireNotEnqueued and RequireManyEnqueued check what
//     was enqueued, by message type, ordering key, tenant and a predicate on
//     the payload (RequireOpts), with failure messages that list what was
//     enqueued. The stores' test kits run them on what a transaction holds:
//     pgstoretest.RequireEnqueuedTx (pgx.Tx) and RequireEnqueuedSQLTx
//     (*sql.Tx), sqlitestoretest.RequireEnqueuedTx and
//     mysqlstoretest.RequireEnqueuedTx, and their NotEnqueued and
//     ManyEnqueued siblings, named as River's rivertest names its helpers.
//   - FakeEnqueuer is an outbox.Enqueuer for handlers that depend on the
//     interface rather than on a store, and records what they enqueue.
//   - RecordingPublisher records every envelope a dispatcher publishes and
//     fails the ones it is told to, transiently or permanently.
//   - Drain runs a dispatcher until the outbox has nothing due and every
//     outcome is written, without sleeping.
//
// Every helper takes a TB, which *testing.T satisfies, so that a test can
// check its failure messages too. A failure message shows each message's
// id, type, ordering key and tenant, and up to 96 bytes of its payload when
// the payload is printable text: test output, never a log of a running
// service.
package outboxtest
