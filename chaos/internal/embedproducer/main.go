// Command embedproducer is the chaos suite's producer that embeds the
// dispatcher, as an application running Reliar in-process does: it
// commits single-message transactions on its own pool while a dispatcher on
// a second pool (the store's: claims, outcome writes and the LISTEN
// connection) publishes them to JetStream.
//
// It commits -before messages, prints "paused" and waits for a line on
// stdin; the scenario cuts the store's connections meanwhile (a proxy in
// front of -store-url goes down), so the dispatcher hears no notification
// and writes nothing more. It then commits -after messages, which the store
// leases at enqueue to its dispatcher while it has room (the zero-claim
// path), and kills itself with SIGKILL as soon as the last commit returns:
// between the commit and its hand-off, which the cut listener would never
// have proven anyway. Every committed id is appended
// to -acked-file as the commit returns, and the dispatcher's events go to
// -events-file, one JSON line each, flushed as written.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox"
	"github.com/reliar/reliar/publisher/natspub"
	"github.com/reliar/reliar/store/pgstore"
)

// event is the body of every message, as the rig's producer sends.
type event struct {
	N int `json:"n"`
}

func (event) MessageType() string { return "chaos_event" }

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "embedproducer:", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		dbURL    = flag.String("database-url", "", "the producer's database URL")
		storeURL = flag.String("store-url", "", "the store's database URL (claims, outcomes, LISTEN)")
		schema   = flag.String("schema", "", "the outbox schema")
		broker   = flag.String("broker", "", "the NATS URL")
		prefix   = flag.String("subject-prefix", "", "the subject prefix")
		events   = flag.String("events-file", "", "where the dispatcher's events go")
		ackedTo  = flag.String("acked-file", "", "where committed message ids go, one per line")
		before   = flag.Int("before", 100, "messages committed before the pause")
		after    = flag.Int("after", 20, "messages committed after the pause, before the kill")
		lease    = flag.Duration("lease", 3*time.Second, "the dispatcher's lease")
		inFlight = flag.Int("max-in-flight", 20, "the dispatcher's MaxInFlight")
	)
	flag.Parse()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))

	pool, err := pgxpool.New(ctx, *dbURL)
	if err != nil {
		return err
	}
	defer pool.Close()
	scfg, err := pgxpool.ParseConfig(*storeURL)
	if err != nil {
		return err
	}
	scfg.ConnConfig.ConnectTimeout = time.Second
	storePool, err := pgxpool.NewWithConfig(ctx, scfg)
	if err != nil {
		return err
	}
	defer storePool.Close()
	store, err := pgstore.New(ctx, storePool, pgstore.WithSchema(*schema), pgstore.WithLogger(log))
	if err != nil {
		return err
	}
	nc, err := nats.Connect(*broker, nats.Name("reliar chaos embedded producer"))
	if err != nil {
		return err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	pub, err := natspub.New(js, natspub.WithSubjectPrefix(*prefix))
	if err != nil {
		return err
	}
	ef, err := os.OpenFile(*events, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	elog := outbox.NewEventLog(ef)
	sink := outbox.EventSinkFunc(func(e outbox.Event) {
		elog.Event(e)
		_ = elog.Flush()
	})
	settings := outbox.DefaultSettings()
	settings.WorkerID = "embedded-" + *schema
	settings.BatchSize, settings.MaxInFlight = 20, *inFlight
	settings.Lease, settings.PublishTimeout, settings.StoreTimeout = *lease, time.Second, 500*time.Millisecond
	settings.PollInterval, settings.IdlePollInterval = 50*time.Millisecond, 200*time.Millisecond
	d, err := outbox.New(store, pub, settings, outbox.WithEvents(sink), outbox.WithLogger(log))
	if err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()

	acked, err := os.OpenFile(*ackedTo, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	n := 0
	commit := func() error {
		msg := reliar.NewMsg(event{N: n})
		n++
		err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			_, err := store.Enqueue(ctx, tx, msg)
			return err
		})
		if err != nil {
			return fmt.Errorf("commit %d: %w", n, err)
		}
		_, err = fmt.Fprintln(acked, msg.ID)
		return err
	}
	for range *before {
		if err := commit(); err != nil {
			return err
		}
	}
	fmt.Println("paused")
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		return fmt.Errorf("wait for the cut: %w", err)
	}
	for range *after {
		if err := commit(); err != nil {
			return err
		}
	}
	// Between the last commit and anything its dispatcher could do.
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	return <-done
}
