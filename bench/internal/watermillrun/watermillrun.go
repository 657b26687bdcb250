// Package watermillrun sets watermill up for the benchmark: the SQL
// publisher inside the producer's transaction, wrapped by the forwarder's
// envelope publisher, and the forwarder reading the SQL topic into a
// publisher that hands every message to the sink.
package watermillrun

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	wmsql "github.com/ThreeDotsLabs/watermill-sql/v4/pkg/sql"
	"github.com/ThreeDotsLabs/watermill/components/forwarder"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/reliar/reliar/bench/internal/harness"
	"github.com/reliar/reliar/bench/internal/payload"
	"github.com/reliar/reliar/bench/internal/pgenv"
	"github.com/reliar/reliar/bench/internal/sink"
)

// Topic names of the benchmark: the SQL table the forwarder reads, and the
// destination that the sink publisher receives.
const (
	forwarderTopic   = "bench_forwarder"
	destinationTopic = "bench_out"
)

// Variant is one configuration of the forwarder under test.
type Variant struct {
	// Name identifies the variant in results.
	Name string
	// BatchSize is the SQL subscriber's SubscribeBatchSize; zero keeps
	// watermill's default (100).
	BatchSize int
	// PollInterval is the SQL subscriber's poll interval; zero keeps
	// watermill's default (1s).
	PollInterval time.Duration
}

// Defaults is the forwarder with watermill-sql's defaults.
func Defaults() Variant { return Variant{Name: "watermill defaults"} }

// Tuned reads 1000 rows per query and polls every 10ms.
func Tuned() Variant {
	return Variant{Name: "watermill tuned", BatchSize: 1000, PollInterval: 10 * time.Millisecond}
}

// System returns the harness system of v.
func (v Variant) System() harness.System { return harness.System{Name: v.Name, Open: v.open} }

func (v Variant) schema() wmsql.DefaultPostgreSQLSchema {
	return wmsql.DefaultPostgreSQLSchema{SubscribeBatchSize: v.BatchSize}
}

func (v Variant) subscriber(pool *pgxpool.Pool) (*wmsql.Subscriber, error) {
	sub, err := wmsql.NewSubscriber(wmsql.BeginnerFromPgx(pool), wmsql.SubscriberConfig{
		SchemaAdapter:    v.schema(),
		OffsetsAdapter:   wmsql.DefaultPostgreSQLOffsetsAdapter{},
		PollInterval:     v.PollInterval,
		InitializeSchema: true,
	}, watermill.NopLogger{})
	if err != nil {
		return nil, fmt.Errorf("watermillrun: subscriber: %w", err)
	}
	return sub, nil
}

func (v Variant) open(ctx context.Context, env pgenv.Env) (harness.Target, error) {
	pool, err := env.Pool(ctx, 0)
	if err != nil {
		return nil, err
	}
	sub, err := v.subscriber(pool)
	if err == nil {
		// Creates the topic's tables, so that the preload can run before
		// the forwarder subscribes.
		err = sub.SubscribeInitialize(forwarderTopic)
		err = errors.Join(err, sub.Close())
	}
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("watermillrun: initialise schema: %w", err)
	}
	return &target{v: v, pool: pool}, nil
}

// target is the forwarder on one run's schema.
type target struct {
	v    Variant
	pool *pgxpool.Pool
}

func (t *target) Enqueue(ctx context.Context, docs []payload.Doc) error {
	tx, err := t.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("watermillrun: begin: %w", err)
	}
	pub, err := wmsql.NewPublisher(wmsql.TxFromPgx(tx), wmsql.PublisherConfig{SchemaAdapter: t.v.schema()}, watermill.NopLogger{})
	if err != nil {
		return errors.Join(fmt.Errorf("watermillrun: publisher: %w", err), tx.Rollback(ctx))
	}
	msgs := make([]*message.Message, len(docs))
	for i, d := range docs {
		msgs[i] = message.NewMessage(watermill.NewUUID(), d.Encode())
		msgs[i].SetContext(ctx)
	}
	if err := forwarder.NewPublisher(pub, forwarder.PublisherConfig{ForwarderTopic: forwarderTopic}).Publish(destinationTopic, msgs...); err != nil {
		return errors.Join(fmt.Errorf("watermillrun: publish: %w", err), tx.Rollback(ctx))
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("watermillrun: commit: %w", err)
	}
	return nil
}

func (t *target) Start(ctx context.Context, s *sink.Sink) (func(context.Context) error, error) {
	sub, err := t.v.subscriber(t.pool)
	if err != nil {
		return nil, err
	}
	fwd, err := forwarder.NewForwarder(sub, sinkPublisher{s}, watermill.NopLogger{}, forwarder.Config{ForwarderTopic: forwarderTopic})
	if err != nil {
		return nil, errors.Join(fmt.Errorf("watermillrun: forwarder: %w", err), sub.Close())
	}
	var wg sync.WaitGroup
	var runErr error
	wg.Go(func() { runErr = fwd.Run(context.WithoutCancel(ctx)) })
	select {
	case <-fwd.Running():
	case <-ctx.Done():
		return nil, errors.Join(context.Cause(ctx), fwd.Close(), waitFor(&wg), sub.Close())
	}
	return func(context.Context) error {
		closeErr := fwd.Close()
		wg.Wait()
		return errors.Join(closeErr, runErr, sub.Close())
	}, nil
}

// waitFor waits for wg and returns nil, so that it can sit in errors.Join.
func waitFor(wg *sync.WaitGroup) error {
	wg.Wait()
	return nil
}

func (t *target) Pending(ctx context.Context) (int64, error) {
	var n int64
	err := t.pool.QueryRow(ctx, `SELECT count(*) FROM "watermill_`+forwarderTopic+`"
WHERE "offset" > (SELECT coalesce(max(offset_acked), 0) FROM "watermill_offsets_`+forwarderTopic+`")`).Scan(&n)
	return n, err
}

func (t *target) Close(context.Context) error {
	t.pool.Close()
	return nil
}

// sinkPublisher is the forwarder's destination: it hands every message to
// the sink.
type sinkPublisher struct{ sink *sink.Sink }

// Publish records every message's arrival.
func (p sinkPublisher) Publish(_ string, msgs ...*message.Message) error {
	for _, m := range msgs {
		if err := p.sink.DeliverPayload(m.Payload); err != nil {
			return fmt.Errorf("watermillrun: sink: %w", err)
		}
	}
	return nil
}

// Close does nothing.
func (sinkPublisher) Close() error { return nil }
