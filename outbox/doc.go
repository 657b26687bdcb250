// Package outbox is Reliar's dispatcher: it claims due rows from an outbox
// table (a Store), publishes each through a reliar.Publisher and records the
// outcome, with leases, retries, dead letters and a circuit breaker. It also
// holds the Maintainer that keeps a table from growing without bound, and
// the Metrics, Tracer and event hooks. The contract a store implements lives
// in package outboxdriver, for store authors; this package re-exports the
// few names of it that users touch (Store, Stats, Ordering, the dead-letter
// types).
//
// # Settings and options
//
// One rule holds for Settings, MaintainerSettings and ExponentialBackoff,
// and for every settings or config value of Reliar's other packages and of
// the reliar command: the zero value of a field means its default, and every
// "Defaults to" in a field's documentation is what the zero value gets.
// Defaults are derived from the fields that are set where the field says so
// (Settings{Lease: 5 * time.Second} shortens PublishTimeout, StoreTimeout and
// DrainTimeout with it), and WithDefaults returns the values that will be
// used. A feature that is on by default is switched off with Off (-1), and a
// retention that never deletes is KeepForever: zero never means "off" or
// "for ever". Validation reports every problem of one value at once, each a
// *ConfigError, joined with errors.Join.
//
// Optional parts are given as Options (WithLogger, WithMetrics, WithTracer,
// WithEvents, WithoutWakeups, WithInbox), one shape for New and
// NewMaintainer; each option validates its argument, and one that does not
// apply to the constructor it is given to is refused. Every store, publisher
// and adapter of Reliar takes its options the same way: WithX functions
// returning an Option that can fail with the package's ErrInvalidOption.
//
// # The guarantee
//
// Delivery is durable at-least-once, never exactly-once: a message whose
// enqueue transaction committed is published at least once, however the
// process, the database or the broker fail. Consumers deduplicate by message
// id (the inbox package does it in their own transaction). Duplicates happen
// in these four windows only:
//
//  1. A crash between a publish and the write that records it — or an
//     outcome write that keeps failing for a whole Lease, after which the
//     dispatcher abandons the row to its lease as if it had crashed. The next
//     owner publishes the message again.
//  2. A lease that lapses while a slow worker is still publishing: another
//     worker reclaims and republishes the row, and the first worker's later
//     outcome write is fenced off by the row's lease token.
//  3. The drain timeout at shutdown: a publish still running at the drain's
//     publish deadline is released, and one that succeeded but whose
//     completion did not land before DrainTimeout is left to its lease.
//  4. An ambiguous publish outcome: the broker accepted the message but its
//     acknowledgement was lost or timed out, so the row is retried. A
//     publisher that ignores its context can even land after the retry.
//
// Two more exist only when you opt in or run such infrastructure:
//
//   - pgstore.WithAsyncCommit: a claim or an outcome write acknowledged to
//     the dispatcher can be lost with the last moments of WAL when the
//     database server crashes, so a published row is published again.
//   - Failover to an asynchronous standby loses the transactions the
//     standby had not received: outcome writes (a duplicate follows), and
//     also producers' own transactions, whose messages may already have
//     been published — not a duplicate, but a message for a change that no
//     longer exists. Synchronous replication closes both.
//
// Unordered dispatch guarantees no order of any kind. PerKey ordering
// publishes the rows of one ordering key one at a time: every two rows of a
// key are published in sequence order or, when their transactions
// overlapped, in commit order — never against causal order (a row whose
// transaction committed before the other was inserted goes first). The
// store documentation states how (see pgstore's). A dead head row unblocks
// its key.
//
// # Fairness across tenants
//
// Claims take due rows in (available_at, sequence) order by default (under a
// backlog, a claim right after a full one starts after that claim's last row
// on stores that can; see Settings.PollInterval for the bound), so one
// tenant's backlog (an import, a retry storm) delays every other tenant's
// messages until it drains. With Fairness FairnessTenant, each claim is
// shared round-robin among the tenants that have due rows (the messages'
// Metadata.TenantID; rows without one form one tenant): every visited
// tenant's first row, then every one's second, and so on, the round going
// on from where the previous claim stopped. A tenant with one due row
// therefore waits about one claim cycle whatever the others hold, and no
// tenant starves. MaxInFlightPerTenant caps the rows of one tenant the
// dispatcher holds, so a tenant whose receiver is slow cannot take all of
// MaxInFlight. Fairness needs a store with the TenantFairness capability
// (pgstore and memstore; New refuses it elsewhere) and cannot be combined
// with PerKey ordering. The store's documentation says how its claim
// enumerates tenants and what that costs.
//
// # The loop
//
// One goroutine owns the dispatcher's state. It claims only when at least
// half a claim fits under MaxInFlight, counting every row it holds (being
// claimed, waiting, publishing, or waiting for its outcome to be written);
// it claims again at once after a full claim, after PollInterval after a
// short one and after IdlePollInterval after an empty one, and a store
// wake-up ends any wait. Publishes run concurrently, at most MaxInFlight
// rows at once, each bounded by PublishTimeout; a panic in a publisher is a
// permanent failure of that row. Outcomes are written in batches, one write
// at a time: at once while a backlog drains; after a write of a few rows
// (fewer than BatchSize/16) while at most a quarter of MaxInFlight is held,
// the next waits nine times as long as that write took (at most
// min(PollInterval, Lease/4)), since every write is a commit and on SQLite
// holds the write lock producers need; paced after a failure. Rows a store
// leased at enqueue and handed over once their commit was proven (the
// zero-claim path, outboxdriver.Handoffer; pgstore's by default) are held
// like claimed rows and count toward MaxInFlight from the enqueue on (for
// at most outboxdriver.HandoffReserveFor while their commit is unproven).
// Leases are renewed every Lease/2.
// Every store call is bounded by StoreTimeout; a transient store error is
// logged and retried, a permanent one ends Run after a best-effort drain.
// The wake-up subscription is a store call like the others: bounded, and
// retried with backoff while it fails (the dispatcher polls meanwhile).
//
// The dispatcher enforces those timeouts itself, so a publisher or a store
// driver that ignores its context cannot hold rows or the loop: a call still
// running at its timeout plus a grace (a tenth of the timeout, between 10ms
// and 1s; a batch publish gets two PublishTimeouts, for the one-at-a-time
// retry after a panic) is given up. A publish given up is a transient
// failure of its rows, which stop being renewed and are retried; a store
// call given up is a failed call (an outcome write is written again, a claim
// is retried, and rows a late claim took are released when its result
// arrives). Late results are ignored. The goroutine of a call given up runs
// on until the call returns — Go cannot stop it — and Health.StuckCalls
// counts those still running; Metrics.CallGivenUp counts every call given
// up, and each is logged at error.
//
// After BreakerThreshold consecutive transient failures on distinct rows
// the circuit breaker opens: the dispatcher stops claiming, releases failed
// rows without recording an attempt and probes with one row every
// IdlePollInterval until a publish succeeds. A broker outage of any length
// therefore dead-letters nothing.
//
// # Shutdown
//
// Cancelling Run's context stops claiming. Rows not yet started are
// released at once; publishes already running may finish until
// D − min(StoreTimeout, DrainTimeout/2), where D is the cancellation plus
// DrainTimeout, and their outcomes are written as usual; rows still
// publishing then are released. Halfway between that moment and D, rows
// whose publish failed but whose Fail has not landed are released too, so
// the next owner retries them at once rather than after a lease; rows
// published but not yet completed are left to their lease (releasing them
// would turn a possible duplicate into a certain one). Run returns by D. A
// publisher or store that ignores its context can leave its goroutine
// running past D.
//
// # Testing code that enqueues
//
// A handler takes the outbox as an Enqueuer[Tx] rather than a concrete
// store; its tests hand it the store, or outboxtest.FakeEnqueuer. Package
// outboxtest and the stores' test kits (pgstoretest, sqlitestoretest,
// mysqlstoretest) assert what a transaction enqueued, record what a
// dispatcher publishes and run one until the outbox is drained.
package outbox
