// Package demo runs the whole outbox path end to end, as `reliar demo`
// does: an orders service writes each order and its message in one
// transaction (rolling every tenth transaction back on purpose), a
// dispatcher publishes the committed messages to NATS JetStream, and a
// consumer counts every delivery. The run then checks that every committed
// order's message arrived and no rolled-back one did, and measures the
// latency from commit to delivery.
//
// With no URLs the demo needs nothing installed: the store is a SQLite
// file and the broker an embedded NATS server, both in a temporary folder
// removed afterwards. Given a database URL it runs on a fresh schema (or
// database) that it drops afterwards; given a NATS URL it runs on a stream
// of its own that it deletes afterwards.
package demo

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/cmd/reliar/internal/progress"
	"github.com/reliar/reliar/cmd/reliar/internal/storeurl"
	"github.com/reliar/reliar/outbox"
)

// Defaults of Config.
const (
	// DefaultMessages is how many orders commit by default.
	DefaultMessages = 10000
	// DefaultProducers is how many goroutines place orders by default.
	DefaultProducers = 8
	// DefaultTimeout bounds the wait for deliveries after the last commit.
	DefaultTimeout = time.Minute
)

// cleanupTimeout bounds the removal of everything the demo created.
const cleanupTimeout = 30 * time.Second

// pollEvery is how often the demo checks its progress.
const pollEvery = 20 * time.Millisecond

// Config configures one run.
type Config struct {
	// Messages is how many orders commit. Defaults to DefaultMessages.
	Messages int
	// DatabaseURL selects the store; empty means a SQLite file in a
	// temporary folder.
	DatabaseURL string
	// NATSURL selects the NATS server; empty means an embedded one.
	NATSURL string
	// Producers is how many goroutines place orders concurrently.
	// Defaults to DefaultProducers.
	Producers int
	// Timeout bounds the wait for deliveries after the last commit.
	// Defaults to DefaultTimeout.
	Timeout time.Duration
	// Settings are the dispatcher's settings. Defaults to Settings().
	Settings *outbox.Settings
	// Logger receives the logs of the store, the dispatcher and the demo.
	// Defaults to slog.Default().
	Logger *slog.Logger
	// Progress draws the delivery progress. Defaults to none.
	Progress func(total int) progress.Bar
	// Announce is told what the demo runs on before it starts, for the
	// summary. Optional.
	Announce func(Setup)
}

// Setup says what a run runs on.
type Setup struct {
	Store       string `json:"store"`
	Broker      string `json:"broker"`
	BatchSize   int    `json:"batch_size"`
	MaxInFlight int    `json:"max_in_flight"`
}

// Settings returns the dispatcher settings of the demo: the defaults, tuned
// for a burst of small messages through a batch publisher. A claim of 512
// rows becomes one PublishBatch call whose acknowledgements JetStream
// pipelines, so claims, publishes and outcome writes are few and large; and
// the table gauges are not polled. The poll intervals stay at their
// defaults: every store the demo runs on wakes the dispatcher when a commit
// lands, and on SQLite every claim and outcome write is a commit that waits
// for the disk, as the producers' do, so a shorter PollInterval (the demo
// had 5 ms) halved what the producers commit while the dispatcher runs
// (BENCHMARKS.md, "SQLite: the demo's connections").
func Settings() outbox.Settings {
	s := outbox.DefaultSettings()
	s.BatchSize = 512
	s.MaxInFlight = 512
	s.StatsInterval = outbox.Off
	s.WorkerID = "reliar-demo"
	return s
}

// Result is the outcome of a run.
type Result struct {
	Setup
	// Committed is how many orders committed.
	Committed int `json:"committed"`
	// RolledBack is how many order transactions were rolled back on purpose.
	RolledBack int `json:"rolled_back"`
	// Published is how many publishes the dispatcher recorded as successes.
	Published int `json:"published"`
	// Delivered is how many committed orders' messages reached the consumer.
	Delivered int `json:"delivered"`
	// Lost is how many committed orders' messages never arrived.
	Lost int `json:"lost"`
	// Duplicates is how many deliveries repeated an earlier one.
	Duplicates int `json:"duplicates"`
	// Unexpected is how many messages arrived that no committed order sent:
	// rolled-back orders' messages, or messages without a readable id.
	Unexpected int `json:"unexpected"`
	// Dead is how many rows the dispatcher dead-lettered.
	Dead int `json:"dead"`
	// Elapsed runs from the first order to the last first delivery.
	Elapsed time.Duration `json:"elapsed_ns"`
	// Throughput is Committed / Elapsed, in messages per second.
	Throughput float64 `json:"throughput_per_second"`
	// P50 and P99 are percentiles of the latency from a transaction's
	// commit to its message's first delivery.
	P50 time.Duration `json:"p50_ns"`
	P99 time.Duration `json:"p99_ns"`
}

// OK reports whether every committed message arrived and nothing else did.
func (r Result) OK() bool { return r.Lost == 0 && r.Unexpected == 0 && r.Committed > 0 }

// Summary is the demo's last line.
func (r Result) Summary() string {
	return fmt.Sprintf("demo: committed=%d rolled_back=%d published=%d delivered=%d lost=%d duplicates=%d throughput=%.0f/s p50=%sms p99=%sms",
		r.Committed, r.RolledBack, r.Published, r.Delivered, r.Lost, r.Duplicates, r.Throughput, millis(r.P50), millis(r.P99))
}

// millis formats d in milliseconds with up to one decimal.
func millis(d time.Duration) string {
	ms := float64(d) / float64(time.Millisecond)
	if ms >= 10 {
		return fmt.Sprintf("%.0f", ms)
	}
	return fmt.Sprintf("%.1f", ms)
}

// ErrBadConfig is matched (with errors.Is) by errors about the Config
// itself, as opposed to failures during the run.
var ErrBadConfig = errors.New("demo: bad configuration")

func (c Config) withDefaults() (Config, error) {
	if c.Messages == 0 {
		c.Messages = DefaultMessages
	}
	if c.Producers == 0 {
		c.Producers = DefaultProducers
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.Settings == nil {
		s := Settings()
		c.Settings = &s
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Progress == nil {
		c.Progress = func(int) progress.Bar { return progress.Discard{} }
	}
	switch {
	case c.Messages < 0:
		return c, fmt.Errorf("%w: --messages must be positive, not %d", ErrBadConfig, c.Messages)
	case c.Producers < 0:
		return c, fmt.Errorf("%w: --producers must be positive, not %d", ErrBadConfig, c.Producers)
	case c.Timeout < 0:
		return c, fmt.Errorf("%w: --timeout must be positive, not %v", ErrBadConfig, c.Timeout)
	}
	return c, nil
}

// Run runs the demo once. It fails (with an error matching
// storeurl.ErrBadURL, storeurl.ErrBadOption or ErrBadConfig for bad input)
// when it cannot run; a run that completes returns its Result, which says
// through OK whether anything was lost.
func Run(ctx context.Context, cfg Config) (res Result, err error) {
	cfg, err = cfg.withDefaults()
	if err != nil {
		return Result{}, err
	}
	loc, err := locate(cfg.DatabaseURL)
	if err != nil {
		return Result{}, err
	}
	dir, err := os.MkdirTemp("", "reliar-demo-")
	if err != nil {
		return Result{}, fmt.Errorf("demo: temporary folder: %w", err)
	}
	defer func() { err = errors.Join(err, removeAll(dir)) }()
	if cfg.DatabaseURL == "" {
		if loc, err = storeurl.Parse("sqlite://" + filepath.Join(dir, "orders.db")); err != nil {
			return Result{}, err
		}
	}

	// Everything created from here on is removed even when ctx is done.
	cleanup := func(f func(context.Context) error) {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
		defer cancel()
		err = errors.Join(err, f(cctx))
	}
	opts := storeurl.Options{Logger: cfg.Logger}
	if loc.Driver() == "sqlite" {
		// A connection for every producer and for the dispatcher's claims,
		// outcome writes and renewals: each writer then waits in the
		// handle's write queue, where the store's writes go first, instead
		// of in database/sql's pool, which serves its waiters in no order
		// (with two connections a claim could wait seconds behind the
		// producers). The wake-up watcher has a connection of its own.
		opts.MaxConns = cfg.Producers + demoStoreConns
		// SQLite has one writer at a time, and each claim and outcome
		// write would otherwise hold it through an fsync that every
		// producer queued behind it waits for. The producers' commits
		// still wait for the disk; a crash of the machine could only
		// republish (sqlitestore.WithAsyncCommit), and the demo's
		// database is thrown away anyway.
		opts.AsyncCommit = true
	}
	backend, err := loc.OpenScratch(ctx, opts)
	if err != nil {
		return Result{}, err
	}
	defer cleanup(backend.Close)
	if _, err := backend.Migrate(ctx); err != nil {
		return Result{}, fmt.Errorf("migrate: %w", err)
	}
	store, err := backend.Store(ctx)
	if err != nil {
		return Result{}, err
	}
	brk, err := startBroker(ctx, cfg.NATSURL, dir, randomID())
	if err != nil {
		return Result{}, err
	}
	defer cleanup(brk.close)

	transactions := transactionsFor(cfg.Messages)
	ord, err := setupOrders(ctx, backend, transactions)
	if err != nil {
		return Result{}, err
	}
	cons, err := startConsumer(ctx, brk, cfg.Messages)
	if err != nil {
		return Result{}, err
	}
	defer cleanup(func(c context.Context) error { cons.stop(c); return nil })

	pub, err := newPublisher(brk)
	if err != nil {
		return Result{}, err
	}
	count := &counters{}
	disp, err := outbox.New(store, pub, *cfg.Settings, outbox.WithMetrics(count), outbox.WithLogger(cfg.Logger))
	if err != nil {
		return Result{}, fmt.Errorf("%w: %w", ErrBadConfig, err)
	}
	setup := Setup{Store: backend.Describe(), Broker: brk.describe, BatchSize: cfg.Settings.BatchSize, MaxInFlight: cfg.Settings.MaxInFlight}
	if cfg.Announce != nil {
		cfg.Announce(setup)
	}

	// The dispatcher runs until the deliveries are in; its Run is waited
	// for before the store and the broker close.
	dctx, stopDispatcher := context.WithCancel(ctx)
	var dispErr error
	var wg sync.WaitGroup
	wg.Go(func() { dispErr = disp.Run(dctx) })
	defer func() {
		stopDispatcher()
		wg.Wait()
		if dispErr != nil {
			err = errors.Join(err, fmt.Errorf("dispatcher: %w", dispErr))
		}
	}()

	bar := cfg.Progress(cfg.Messages)
	defer bar.Finish()
	start := time.Now()
	// The bar follows the deliveries while the producers run too, not only
	// once they are done.
	stopBar := follow(&cons.distinct, cfg.Messages, bar)
	err = ord.run(ctx, cfg.Producers)
	stopBar()
	if err != nil {
		return Result{}, err
	}
	if err := awaitDeliveries(ctx, cons, store, cfg.Messages, cfg.Timeout, bar); err != nil {
		return Result{}, err
	}
	res = tally(ord, cons, start)
	res.Setup = setup
	res.Published = int(count.published.Load())
	res.Dead = int(count.dead.Load())
	return res, nil
}

// follow sets bar to the count of n (at most total) every pollEvery until
// the returned func is called; that func returns once the goroutine ended,
// so that the bar has one writer at a time.
func follow(n *atomic.Int64, total int, bar progress.Bar) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(pollEvery)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				bar.Set(min(int(n.Load()), total))
			}
		}
	})
	return func() {
		close(done)
		wg.Wait()
	}
}

// demoStoreConns is the SQLite demo's connections beyond one per producer:
// the dispatcher's claims, outcome writes and renewals, and the progress
// poll's Stats.
const demoStoreConns = 8

// locate parses the database URL, if any.
func locate(raw string) (storeurl.Location, error) {
	if raw == "" {
		return storeurl.Location{}, nil
	}
	return storeurl.Parse(raw)
}

// awaitDeliveries waits until every committed message was delivered and the
// outbox holds no pending row (so a retried publish, which would be a
// duplicate, has happened), or until timeout, or ctx ends.
func awaitDeliveries(ctx context.Context, cons *consumer, store outbox.Store, want int, timeout time.Duration, bar progress.Bar) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		got := int(cons.distinct.Load())
		bar.Set(min(got, want))
		if got >= want {
			st, err := store.Stats(ctx)
			if err == nil && st.Pending == 0 {
				// The last acknowledgements may still be on the wire.
				return sleep(ctx, 4*pollEvery)
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline.C:
			return nil
		case <-tick.C:
		}
	}
}

// sleep waits for d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// tally compares what committed with what arrived.
func tally(ord *orders, cons *consumer, start time.Time) Result {
	commits, rolledBack := ord.results()
	seen, unreadable := cons.snapshot()
	res := Result{Committed: len(commits), RolledBack: len(rolledBack), Unexpected: unreadable}
	latencies := make([]time.Duration, 0, len(commits))
	committed := make(map[reliar.MessageID]bool, len(commits))
	last := start
	for _, c := range commits {
		committed[c.id] = true
		d, ok := seen[c.id]
		if !ok {
			res.Lost++
			continue
		}
		res.Delivered++
		latencies = append(latencies, max(0, d.first.Sub(c.at)))
		if d.first.After(last) {
			last = d.first
		}
	}
	for id, d := range seen {
		res.Duplicates += d.count - 1
		if !committed[id] {
			res.Unexpected++
		}
	}
	res.Elapsed = last.Sub(start)
	if res.Elapsed > 0 {
		res.Throughput = float64(res.Delivered) / res.Elapsed.Seconds()
	}
	sortDurations(latencies)
	res.P50 = percentile(latencies, 50)
	res.P99 = percentile(latencies, 99)
	return res
}

// randomID returns a short random id for the names of the demo's stream
// and subjects.
func randomID() string { return reliar.NewMessageID().String()[24:] }

// removeAll removes the temporary folder.
func removeAll(dir string) error {
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("demo: remove %s: %w", dir, err)
	}
	return nil
}
