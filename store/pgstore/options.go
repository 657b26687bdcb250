package pgstore

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

// config is what the options set. Every field's zero value means its default.
type config struct {
	// schema holds the outbox table. Defaults to "public".
	schema string
	// maxPayloadBytes refuses larger payloads at enqueue. Defaults to
	// outboxdriver.DefaultMaxPayloadBytes (1 MiB).
	maxPayloadBytes int
	// serializer encodes message bodies. Defaults to reliar.JSON.
	serializer reliar.Serializer
	// statementTimeout bounds every statement the store runs on its pool
	// (not the caller's transaction). Defaults to 0: none beyond ctx.
	statementTimeout time.Duration
	// logger receives warnings and debug shortfalls. Defaults to
	// slog.Default().
	logger *slog.Logger
	// noNotify turns off pg_notify at enqueue.
	noNotify bool
	// asyncCommit commits claims and outcome writes without waiting for
	// their WAL flush.
	asyncCommit bool
	// deleteOnComplete deletes published rows instead of marking them.
	deleteOnComplete bool
	// noHandoff turns off leasing rows at enqueue to a dispatcher of this
	// process (handoff.go).
	noHandoff bool
	// preparedThroughPooler accepts named prepared statements through a
	// transaction pooler (WithPreparedStatementsThroughPooler).
	preparedThroughPooler bool
	// maintenanceLease is how long the maintenance lease lasts unrenewed.
	// Defaults to defaultMaintenanceLease.
	maintenanceLease time.Duration
}

func defaultConfig() config {
	return config{
		schema:          DefaultSchema,
		maxPayloadBytes: outboxdriver.DefaultMaxPayloadBytes,
		serializer:      reliar.JSON,
		logger:          slog.Default(),

		maintenanceLease: defaultMaintenanceLease,
	}
}

// Option configures a Store. Options validate their value and return an error
// wrapping ErrInvalidOption. The same options are taken by New, Migrate,
// Migrations, EnableNotifyTrigger and DisableNotifyTrigger, so that one
// option list names the schema for all of them; each uses the options that
// concern it (the schema, for the last four) and ignores the others.
type Option func(*config) error

// applyOptions returns the defaults with opts applied; nil options are
// skipped.
func applyOptions(opts []Option) (config, error) {
	cfg := defaultConfig()
	for _, opt := range opts {
		if opt == nil {
			continue
		}
		if err := opt(&cfg); err != nil {
			return config{}, err
		}
	}
	return cfg, nil
}

// namesOf returns the table names of the schema opts name.
func namesOf(opts []Option) (names, error) {
	cfg, err := applyOptions(opts)
	if err != nil {
		return names{}, err
	}
	return newNames(cfg.schema)
}

// WithSchema sets the schema that holds the outbox table. Defaults to
// "public". The name must be a plain identifier (see ValidateSchema).
func WithSchema(name string) Option {
	return func(c *config) error {
		if err := ValidateSchema(name); err != nil {
			return fmt.Errorf("%w: %w", ErrInvalidOption, err)
		}
		c.schema = name
		return nil
	}
}

// WithMaxPayloadBytes sets the largest payload Enqueue accepts. Defaults to
// outboxdriver.DefaultMaxPayloadBytes (1 MiB).
func WithMaxPayloadBytes(n int) Option {
	return func(c *config) error {
		if n <= 0 {
			return fmt.Errorf("%w: MaxPayloadBytes must be positive, got %d", ErrInvalidOption, n)
		}
		c.maxPayloadBytes = n
		return nil
	}
}

// WithSerializer sets the serializer of message bodies. Defaults to
// reliar.JSON.
func WithSerializer(s reliar.Serializer) Option {
	return func(c *config) error {
		if s == nil {
			return fmt.Errorf("%w: nil Serializer", ErrInvalidOption)
		}
		c.serializer = s
		return nil
	}
}

// WithStatementTimeout bounds every statement the store runs on its own pool
// with SET LOCAL statement_timeout, pipelined with the statement in one round
// trip. Enqueue is not affected: the caller's transaction is the caller's.
// The first use of a statement on a connection prepares it in a round trip of
// its own, which the timeout does not bound, so bound calls with their
// context as well. Zero means the default, which is no statement timeout:
// statements are then bounded by their context alone.
func WithStatementTimeout(d time.Duration) Option {
	return func(c *config) error {
		if d < 0 {
			return fmt.Errorf("%w: negative StatementTimeout %s", ErrInvalidOption, d)
		}
		c.statementTimeout = d
		return nil
	}
}

// WithLogger sets the logger. Defaults to slog.Default().
func WithLogger(l *slog.Logger) Option {
	return func(c *config) error {
		if l == nil {
			return fmt.Errorf("%w: nil Logger", ErrInvalidOption)
		}
		c.logger = l
		return nil
	}
}

// WithoutNotify stops Enqueue from issuing pg_notify, and the store from
// reporting the Notify capability. Use it behind PgBouncer in transaction
// pooling mode, where LISTEN does not work, or when the cost of notifications
// (they serialise committing transactions) matters more than latency.
func WithoutNotify() Option {
	return func(c *config) error {
		c.noNotify = true
		return nil
	}
}

// WithAsyncCommit commits the store's own dispatch transactions (the claims
// of Acquire, and Complete, Fail, Release and ExtendLease) with SET LOCAL
// synchronous_commit = off, sent in the same round trip: PostgreSQL then
// acknowledges the commit before the WAL reaches the disk, saving a flush
// per claim and per outcome write. Enqueue, which runs in the caller's
// transaction, is never affected, nor are Purge and the dead-letter
// operations.
//
// Delivery stays at-least-once and no message is ever lost, since the
// message itself was committed synchronously by its producer. What a crash
// of the database server (or a failover to an asynchronous replica) can
// lose is the last fraction of a second of these commits: a lost Complete
// republishes its message, a lost Fail or Release makes the row due
// earlier, and a lost claim makes the row due again as if it had never
// been claimed. Such a republish is then a duplicate outside the
// dispatcher's four documented windows: the record does not say it was
// reclaimed, the broker's dedup-window check and MaxClaims do not see it.
// It lowers the idle latency's tail, where a claim's WAL flush is most of
// the claim's time; see BENCHMARKS.md for the measurements.
func WithAsyncCommit() Option {
	return func(c *config) error {
		c.asyncCommit = true
		return nil
	}
}

// WithDeleteOnComplete makes Complete delete each published row instead of
// setting its published_at: the table then holds only pending and dead rows,
// never grows with published ones, and needs no retention purge of them
// (Purge's published pass finds nothing). Stats and the dead letters are
// unaffected, since they never read published rows. The cost: once
// published, a message is gone from the table, so it cannot be audited,
// counted or inspected there afterwards.
func WithDeleteOnComplete() Option {
	return func(c *config) error {
		c.deleteOnComplete = true
		return nil
	}
}

// WithoutHandoff turns off the zero-claim path, which is on by default
// whenever notifications are (outboxdriver.Handoffer): while a dispatcher of
// this process runs on the store, Enqueue inserts each eligible row already
// leased to it, its lease computed from the database's clock at the
// statement, and the store hands the rows over once the notification naming
// the enqueue proves its commit. Neither a claim statement nor its WAL flush
// then sits between the producer's commit and the publish (BENCHMARKS.md,
// "The zero-claim path"). Eligible: no ordering key, no AvailableAt, no
// ExpiresAt, and no tenant when the dispatcher caps tenants; a dispatcher
// with tenant fairness takes no hand-offs. A hand-off that finds less than
// the dispatcher's PublishTimeout of lease left is dropped, and a row never
// handed over (its transaction rolled back, its notification lost while the
// listener reconnected, the process gone) is claimed again once its lease
// lapses, counted as a lapsed claim. Rows waiting for their hand-off count
// toward the dispatcher's MaxInFlight (for at most
// outboxdriver.HandoffReserveFor). Only Enqueue leases at enqueue, not
// EnqueueSQL; stores without a dispatcher in their process never do.
func WithoutHandoff() Option {
	return func(c *config) error {
		c.noHandoff = true
		return nil
	}
}

// WithPreparedStatementsThroughPooler lets New accept a pool in pgx's
// default query mode (cache_statement, named prepared statements) that
// reaches PostgreSQL through a pooler. Only for a pooler that keeps
// prepared statements per client itself, such as PgBouncer 1.21 and later
// with max_prepared_statements set, or one in session mode (New cannot
// tell the pool modes apart and treats every pooler as a transaction
// pooler); PgBouncer 1.18 (Debian 12's) in transaction mode does not, and
// New refuses such a pool with ErrPreparedStatementsPooled without this
// option.
func WithPreparedStatementsThroughPooler() Option {
	return func(c *config) error {
		c.preparedThroughPooler = true
		return nil
	}
}

// WithMaintenanceLease sets how long the maintenance lease
// (TryLockMaintenance) lasts without a renewal: after a holder crashed,
// another maintainer takes over once this has passed. The holder renews
// it every third of it. Defaults to 30 seconds; d must be at least a
// second.
func WithMaintenanceLease(d time.Duration) Option {
	return func(c *config) error {
		if d < time.Second {
			return fmt.Errorf("%w: maintenance lease %v is under a second", ErrInvalidOption, d)
		}
		c.maintenanceLease = d
		return nil
	}
}
