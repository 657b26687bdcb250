// Package inbox turns at-least-once delivery into effectively-once processing.
//
// Every consumer of an outbox receives duplicates (package outbox names the
// four windows). A consumer that processes a message inside a database
// transaction records (consumer, message id) in the same transaction through
// Process: the business effect and the record commit together or not at
// all, and a second delivery of the same message finds the record and is
// skipped with ErrAlreadyProcessed. A rolled-back transaction leaves no
// record, so the redelivery is processed.
//
// Stores implement Marker for their own transaction type: pgstore's inbox
// takes a pgx.Tx, sqlitestore's a *sql.Tx, and this package's Memory a
// *MemoryTx for unit tests. Package inboxtest is the conformance suite each
// implementation passes.
//
// Records are kept for a retention period (DefaultRetention, 14 days) and
// then purged. The retention must exceed the longest time a broker may
// redeliver a message (its redelivery horizon: JetStream's MaxAge or
// consumer redelivery, Kafka's retention, RabbitMQ's queue TTL): a
// redelivery older than the retention would be processed again.
package inbox
