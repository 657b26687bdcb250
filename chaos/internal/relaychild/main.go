// Command relaychild is a stand-in for `reliar relay` that the chaos suite
// can run as a child process: it runs outbox dispatchers over pgstore and
// the NATS JetStream publisher with the relay's flags, writes every
// dispatcher event to --events-file (flushed after each event, so a
// SIGKILL loses none), and drains on SIGTERM, exiting 0.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go"
	"github.com/reliar/reliar/outbox"
	natspub "github.com/reliar/reliar/publisher/nats"
	"github.com/reliar/reliar/store/pgstore"
)

// config holds the flags, named as the relay names them.
type config struct {
	databaseURL, schema, broker, prefix, eventsFile, ordering string
	dispatchers, batchSize, maxInFlight, maxAttempts          int
	lease, publishTimeout, storeTimeout, drainTimeout         time.Duration
	pollInterval, idlePollInterval                            time.Duration
	noListen                                                  bool
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	d := outbox.DefaultSettings()
	var c config
	fs := flag.NewFlagSet("relaychild", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.databaseURL, "database-url", "", "PostgreSQL URL")
	fs.StringVar(&c.schema, "schema", "public", "outbox schema")
	fs.StringVar(&c.broker, "broker", "", "nats:// URL")
	fs.StringVar(&c.prefix, "subject-prefix", natspub.DefaultSubjectPrefix, "subject prefix")
	fs.StringVar(&c.eventsFile, "events-file", "", "write dispatcher events as JSON lines here")
	fs.StringVar(&c.ordering, "ordering", "unordered", "unordered or per-key")
	fs.StringVar(new(string), "metrics-addr", "", "ignored: no metrics endpoint")
	fs.IntVar(&c.dispatchers, "dispatchers", 1, "dispatchers")
	fs.IntVar(&c.batchSize, "batch-size", d.BatchSize, "rows per claim")
	fs.IntVar(&c.maxInFlight, "max-in-flight", d.MaxInFlight, "rows in flight")
	fs.IntVar(&c.maxAttempts, "max-attempts", outbox.DefaultBackoff().MaxAttempts, "attempts before dead")
	fs.DurationVar(&c.lease, "lease", d.Lease, "lease")
	fs.DurationVar(&c.publishTimeout, "publish-timeout", d.PublishTimeout, "publish timeout")
	fs.DurationVar(&c.storeTimeout, "store-timeout", d.StoreTimeout, "store timeout")
	fs.DurationVar(&c.drainTimeout, "drain-timeout", d.DrainTimeout, "drain timeout")
	fs.DurationVar(&c.pollInterval, "poll-interval", d.PollInterval, "poll interval")
	fs.DurationVar(&c.idlePollInterval, "idle-poll-interval", d.IdlePollInterval, "idle poll interval")
	fs.BoolVar(&c.noListen, "no-listen", false, "poll only")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if c.databaseURL == "" || c.broker == "" {
		return c, errors.New("--database-url and --broker are required")
	}
	return c, nil
}

func (c config) settings() (outbox.Settings, error) {
	s := outbox.DefaultSettings()
	s.BatchSize, s.MaxInFlight = c.batchSize, c.maxInFlight
	s.Lease, s.PublishTimeout, s.StoreTimeout, s.DrainTimeout = c.lease, c.publishTimeout, c.storeTimeout, c.drainTimeout
	s.PollInterval, s.IdlePollInterval = c.pollInterval, c.idlePollInterval
	retry := outbox.DefaultBackoff()
	retry.MaxAttempts = c.maxAttempts
	s.Retry = retry
	switch c.ordering {
	case "unordered":
	case "per-key":
		s.Ordering = outbox.PerKey
	default:
		return s, fmt.Errorf("--ordering %q: want unordered or per-key", c.ordering)
	}
	return s, nil
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	// The first line on stderr tells a supervisor the signal handlers are
	// installed: from now on SIGTERM drains instead of killing.
	fmt.Fprintln(os.Stderr, "relaychild: starting")
	err := run(ctx, os.Args[1:], os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "relaychild:", err)
		var usage usageError
		if errors.As(err, &usage) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

func run(ctx context.Context, args []string, stderr io.Writer) error {
	c, err := parseFlags(args, stderr)
	if err != nil {
		return usageError{err}
	}
	settings, err := c.settings()
	if err != nil {
		return usageError{err}
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	pool, err := pgxpool.New(ctx, c.databaseURL) // connects lazily
	if err != nil {
		return usageError{fmt.Errorf("database: %w", err)}
	}
	defer pool.Close()
	opts := []pgstore.Option{pgstore.WithSchema(c.schema), pgstore.WithLogger(log)}
	if c.noListen {
		opts = append(opts, pgstore.WithoutNotify())
	}
	store, err := untilReady(ctx, log, "store", func(ctx context.Context) (*pgstore.Store, error) {
		return pgstore.New(ctx, pool, opts...)
	})
	if err != nil {
		return err
	}
	pub, err := untilReady(ctx, log, "broker", func(ctx context.Context) (*natspub.Publisher, error) {
		return natspub.Connect(ctx, c.broker, natspub.WithSubjectPrefix(c.prefix),
			natspub.WithConnOptions(nats.MaxReconnects(-1), nats.ReconnectWait(100*time.Millisecond)))
	})
	if err != nil {
		return err
	}
	defer pub.Close()
	dopts := []outbox.Option{outbox.WithLogger(log)}
	if c.noListen {
		dopts = append(dopts, outbox.WithoutWakeups())
	}
	if c.eventsFile != "" {
		f, err := os.OpenFile(c.eventsFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return fmt.Errorf("events file: %w", err)
		}
		defer f.Close()
		events := &flushingLog{log: outbox.NewEventLog(f)}
		dopts = append(dopts, outbox.WithEvents(events))
		defer events.close(stderr)
	}
	return runDispatchers(ctx, c.dispatchers, store, pub, settings, dopts)
}

// untilReady calls open until it succeeds, as the relay does at start-up:
// a database or broker that is down, restarting or not yet migrated is
// waited for. A bad schema name is bad input and ends at once.
func untilReady[T any](ctx context.Context, log *slog.Logger, what string, open func(context.Context) (T, error)) (T, error) {
	for {
		attempt, cancel := context.WithTimeout(ctx, 5*time.Second)
		v, err := open(attempt)
		cancel()
		switch {
		case err == nil:
			return v, nil
		case errors.Is(err, pgstore.ErrInvalidSchema):
			return v, usageError{fmt.Errorf("%s: %w", what, err)}
		}
		log.Warn("not ready; retrying", "what", what, "error", err)
		select {
		case <-ctx.Done():
			return v, fmt.Errorf("%s: %w (last error: %w)", what, ctx.Err(), err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// runDispatchers runs n dispatchers until ctx ends and returns the first
// error any of them returned.
func runDispatchers(ctx context.Context, n int, store *pgstore.Store, pub *natspub.Publisher, s outbox.Settings, opts []outbox.Option) error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		d, err := outbox.New(store, pub, s, opts...)
		if err != nil {
			return usageError{err}
		}
		wg.Go(func() { errs[i] = d.Run(ctx) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// flushingLog writes each event through to the file at once, so that a
// process killed with SIGKILL leaves every event it reported.
type flushingLog struct{ log *outbox.EventLog }

func (l *flushingLog) Event(e outbox.Event) {
	l.log.Event(e)
	_ = l.log.Flush()
}

func (l *flushingLog) close(stderr io.Writer) {
	if err := l.log.Flush(); err != nil {
		fmt.Fprintln(stderr, "relaychild: events file:", err)
	}
}
