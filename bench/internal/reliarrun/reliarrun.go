// Package reliarrun sets Reliar up for the benchmark: store/pgstore on the
// run's schema, the outbox dispatcher, and a publisher that hands every
// message to the sink.
package reliarrun

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/reliar/reliar"
	"github.com/reliar/reliar/bench/internal/harness"
	"github.com/reliar/reliar/bench/internal/payload"
	"github.com/reliar/reliar/bench/internal/pgenv"
	"github.com/reliar/reliar/bench/internal/quietlog"
	"github.com/reliar/reliar/bench/internal/sink"
	"github.com/reliar/reliar/outbox"
	"github.com/reliar/reliar/store/pgstore"
)

// Message is the benchmark document as a Reliar message body.
type Message payload.Doc

// MessageType implements reliar.Message.
func (Message) MessageType() string { return "bench.message" }

// Variant is one configuration of Reliar under test.
type Variant struct {
	// Name identifies the variant in results.
	Name string
	// Batch gives the dispatcher a reliar.BatchPublisher.
	Batch bool
	// Tune changes the default settings; nil keeps them.
	Tune func(*outbox.Settings)
	// Publisher, when set, replaces the sink publisher: it is built for
	// every run from the run's sink.
	Publisher func(s *sink.Sink) reliar.Publisher
	// StoreOptions are added to the store's options.
	StoreOptions []pgstore.Option
	// Dispatchers is the number of dispatchers sharing the store; 0 means 1.
	Dispatchers int
	// AfterMigrate, when set, is SQL run on the run's schema after
	// pgstore.Migrate: a change of the table's storage to measure.
	AfterMigrate string
	// Tenant, when set, is the Metadata.TenantID of every message the
	// target enqueues.
	Tenant string
}

// Defaults is Reliar with outbox.DefaultSettings and a plain Publisher.
func Defaults() Variant { return Variant{Name: "reliar defaults"} }

// DefaultsBatch is Reliar with outbox.DefaultSettings and a BatchPublisher:
// the configuration of the peers' harness of issue 22 (a no-op
// BatchPublisher at default settings), where the dispatcher hands each
// publish call a batch instead of starting a goroutine per message.
func DefaultsBatch() Variant { return Variant{Name: "reliar defaults batch publisher", Batch: true} }

// Batch512 is Reliar with a BatchPublisher, BatchSize and MaxInFlight 512.
func Batch512() Variant {
	return Variant{Name: "reliar batch 512", Batch: true, Tune: func(s *outbox.Settings) {
		s.BatchSize, s.MaxInFlight = 512, 512
	}}
}

// Batch512Overlap is Batch512 with MaxInFlight 1024, so that the next
// claim of 512 rows can start while the previous batch's outcomes are
// being written: not a default, an experiment for the speed work.
func Batch512Overlap() Variant {
	return Variant{Name: "reliar batch 512 in-flight 1024", Batch: true, Tune: func(s *outbox.Settings) {
		s.BatchSize, s.MaxInFlight = 512, 1024
	}}
}

// AsyncCommit is Reliar at default settings with pgstore.WithAsyncCommit:
// claims and outcome writes commit without waiting for their WAL flush.
func AsyncCommit() Variant {
	return Variant{Name: "reliar async-commit", StoreOptions: []pgstore.Option{pgstore.WithAsyncCommit()}}
}

// DeleteOnComplete is Reliar at default settings with
// pgstore.WithDeleteOnComplete: published rows are deleted, not marked.
func DeleteOnComplete() Variant {
	return Variant{Name: "reliar delete-on-complete", StoreOptions: []pgstore.Option{pgstore.WithDeleteOnComplete()}}
}

// AsyncDelete combines AsyncCommit and DeleteOnComplete.
func AsyncDelete() Variant {
	return Variant{Name: "reliar async+delete", StoreOptions: []pgstore.Option{pgstore.WithAsyncCommit(), pgstore.WithDeleteOnComplete()}}
}

// InFlight is Reliar at default settings with MaxInFlight n: an
// experiment for retuning the default.
func InFlight(n int) Variant {
	return Variant{Name: fmt.Sprintf("reliar in-flight %d", n), Tune: func(s *outbox.Settings) { s.MaxInFlight = n }}
}

// TwoDispatchers is two dispatchers at default settings on one store: the
// raw loop's concurrency (two claims at once), where one dispatcher has at
// most one claim in flight.
func TwoDispatchers() Variant { return Variant{Name: "reliar 2 dispatchers", Dispatchers: 2} }

// WithoutNotify is Reliar at default settings with pgstore.WithoutNotify:
// Enqueue sends no notification, so commits do not queue for the
// notification lock (an idle dispatcher then polls).
func WithoutNotify() Variant {
	return Variant{Name: "reliar without notify", StoreOptions: []pgstore.Option{pgstore.WithoutNotify()}}
}

// WithoutHandoff is Reliar at default settings on a store opened with
// pgstore.WithoutHandoff: every row is claimed, none is leased at enqueue
// and handed over on its commit's notification (the zero-claim path, on by
// default).
func WithoutHandoff() Variant {
	return Variant{Name: "reliar without handoff", StoreOptions: []pgstore.Option{pgstore.WithoutHandoff()}}
}

// Fillfactor is Reliar at default settings on a table whose pages are
// filled to percent at insert (schema v3 fills them to half): what the
// half-filled pages cost the enqueue and give the dispatch.
func Fillfactor(percent int) Variant {
	return Variant{
		Name:         fmt.Sprintf("reliar fillfactor %d", percent),
		AfterMigrate: fmt.Sprintf("ALTER TABLE outbox SET (fillfactor = %d)", percent),
	}
}

// WithoutTenantIndex is Reliar at default settings on a table without the
// fair claim's tenant index (schema v5): what that index costs the enqueue
// of rows that carry no tenant.
func WithoutTenantIndex() Variant {
	return Variant{Name: "reliar without tenant index", AfterMigrate: "DROP INDEX outbox_tenant_pending_idx"}
}

// WithoutChecks is Reliar at default settings on a table without its check
// constraints (the terminal, dead-letter and readable-row checks of schema
// versions 1 and 4): what PostgreSQL's evaluation of them costs each
// statement, which it prepares anew for every INSERT and UPDATE.
func WithoutChecks() Variant {
	return Variant{Name: "reliar without checks", AfterMigrate: `ALTER TABLE outbox
    DROP CONSTRAINT outbox_terminal_ck, DROP CONSTRAINT outbox_dead_pair_ck,
    DROP CONSTRAINT outbox_dead_reason_ck, DROP CONSTRAINT outbox_times_finite_ck,
    DROP CONSTRAINT outbox_message_version_ck, DROP CONSTRAINT outbox_counters_ck`}
}

// Options returns the variants that run only when named with -only: the
// store options, the table's fill factor, the MaxInFlight experiments and
// two dispatchers.
func Options() []Variant {
	return []Variant{AsyncCommit(), DeleteOnComplete(), AsyncDelete(), WithoutNotify(), Fillfactor(80), Fillfactor(100), WithoutTenantIndex(), WithoutHandoff(), WithoutChecks(),
		InFlight(1024), InFlight(1536), InFlight(2048), TwoDispatchers()}
}

// System returns the harness system of v.
func (v Variant) System() harness.System {
	return harness.System{Name: v.Name, Open: v.open}
}

func (v Variant) open(ctx context.Context, env pgenv.Env) (harness.Target, error) {
	pool, err := env.Pool(ctx, 0)
	if err != nil {
		return nil, err
	}
	if err := pgstore.Migrate(ctx, pool, pgstore.WithSchema(env.Schema)); err != nil {
		pool.Close()
		return nil, fmt.Errorf("reliarrun: migrate: %w", err)
	}
	if v.AfterMigrate != "" {
		if _, err := pool.Exec(ctx, v.AfterMigrate); err != nil {
			pool.Close()
			return nil, fmt.Errorf("reliarrun: after migrate: %w", err)
		}
	}
	// Errors only: the store warns that other schemas of this shared
	// database hold outbox tables, which is how the benchmark works.
	opts := append([]pgstore.Option{pgstore.WithSchema(env.Schema), pgstore.WithLogger(quietlog.AtLevel(slog.LevelError))}, v.StoreOptions...)
	store, err := pgstore.New(ctx, pool, opts...)
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("reliarrun: new store: %w", err)
	}
	return &target{v: v, pool: pool, store: store}, nil
}

// target is Reliar on one run's schema.
type target struct {
	v     Variant
	pool  *pgxpool.Pool
	store *pgstore.Store
}

func (t *target) Enqueue(ctx context.Context, docs []payload.Doc) error {
	msgs := make([]reliar.Outgoing, len(docs))
	for i, d := range docs {
		msgs[i] = reliar.NewMsg(Message(d))
		msgs[i].Metadata.TenantID = t.v.Tenant
	}
	tx, err := t.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("reliarrun: begin: %w", err)
	}
	if _, err := t.store.Enqueue(ctx, tx, msgs...); err != nil {
		return errors.Join(fmt.Errorf("reliarrun: enqueue: %w", err), tx.Rollback(ctx))
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("reliarrun: commit: %w", err)
	}
	return nil
}

func (t *target) Start(ctx context.Context, s *sink.Sink) (func(context.Context) error, error) {
	settings := outbox.DefaultSettings()
	if t.v.Tune != nil {
		t.v.Tune(&settings)
	}
	var pub reliar.Publisher = Publisher{Sink: s}
	switch {
	case t.v.Publisher != nil:
		pub = t.v.Publisher(s)
	case t.v.Batch:
		pub = BatchPublisher{Publisher{Sink: s}}
	}
	return startDispatchers(ctx, t.store, pub, settings, max(t.v.Dispatchers, 1))
}

// startDispatchers runs n dispatchers on store until the returned stop is
// called; stop waits for every Run to return.
func startDispatchers(ctx context.Context, store outbox.Store, pub reliar.Publisher, settings outbox.Settings, n int) (func(context.Context) error, error) {
	ds := make([]*outbox.Dispatcher, n)
	for i := range ds {
		d, err := outbox.New(store, pub, settings, outbox.WithLogger(quietlog.New()))
		if err != nil {
			return nil, fmt.Errorf("reliarrun: new dispatcher: %w", err)
		}
		ds[i] = d
	}
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	runErrs := make([]error, len(ds))
	for i, d := range ds {
		wg.Go(func() { runErrs[i] = d.Run(rctx) })
	}
	return func(context.Context) error {
		cancel()
		wg.Wait()
		if err := errors.Join(runErrs...); err != nil {
			return fmt.Errorf("reliarrun: dispatcher: %w", err)
		}
		return nil
	}, nil
}

func (t *target) Pending(ctx context.Context) (int64, error) {
	var n int64
	err := t.pool.QueryRow(ctx, `SELECT count(*) FROM outbox WHERE published_at IS NULL AND dead_at IS NULL`).Scan(&n)
	return n, err
}

func (t *target) Close(context.Context) error {
	t.pool.Close()
	return nil
}
