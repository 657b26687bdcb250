package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/reliar/reliar/cmd/reliar/internal/broker"
	"github.com/reliar/reliar/cmd/reliar/internal/exitcode"
	"github.com/reliar/reliar/cmd/reliar/internal/flagval"
	"github.com/reliar/reliar/cmd/reliar/internal/relay"
	"github.com/reliar/reliar/cmd/reliar/internal/storeurl"
	"github.com/reliar/reliar/outbox"
)

// relayLogLevel is the relay's log level unless --log-level (or its
// variable or key) says otherwise: a long-running process reports its life
// at info, where operator commands stay quiet at warn.
const relayLogLevel = "info"

// relayFlags are the flags of reliar relay. Every number and duration left
// unset stays zero, so that the dispatcher derives it from the ones that
// are set (a shorter --lease brings the timeouts down with it).
type relayFlags struct {
	db         dbFlags
	brokerURL  string
	brokerOpts broker.Options

	dispatchers      int
	workerID         string
	poolSize         int
	batchSize        int
	maxInFlight      int
	pollInterval     time.Duration
	idlePollInterval time.Duration
	lease            time.Duration
	publishTimeout   time.Duration
	storeTimeout     time.Duration
	drainTimeout     time.Duration
	statsInterval    time.Duration
	maxAttempts      int
	maxClaims        int
	breakerThreshold int
	ordering         string
	fair             string
	maxPerTenant     int
	noListen         bool
	asyncCommit      bool

	migrate             bool
	noMaintainer        bool
	publishedRetention  time.Duration
	deadRetention       time.Duration
	maintenanceInterval time.Duration

	metricsAddr string
	eventsFile  string
}

func newRelayCommand(app *App) *cobra.Command {
	var f relayFlags
	cmd := &cobra.Command{
		Use:   "relay",
		Short: "Publish the outbox's messages to a broker, as a process of its own",
		Long: `relay runs dispatchers over the outbox table and publishes every message to the
broker named by --broker's scheme, and runs the maintainer, which deletes old
published and dead rows and moves expired ones to dead. It runs until SIGINT or
SIGTERM, then drains within --drain-timeout and exits 0. It exits 1 when the
store fails in a way that retrying cannot fix (a dropped table, lost
privileges), and 2 on bad input.

Brokers, by the scheme of --broker:
  nats://host:4222    JetStream; subject <--subject-prefix>.<message type>;
                      --create-stream creates a stream on <prefix>.> if none
                      captures it
  kafka://h1:9092,h2:9092
                      Kafka with acks=all; --topic NAME for every message,
                      --topic TYPE=NAME (repeatable) for one message type
  amqp://, amqps://   RabbitMQ with publisher confirms; --exchange (- for the
                      default exchange), --routing-key with {type} and {key}
  redis://, rediss:// a Redis stream, --stream
  http://, https://   a webhook signed with --webhook-secret (repeatable; prefer
                      RELIAR_WEBHOOK_SECRET, comma-separated, to the command line)

The relay starts even when the database is down or the schema not migrated:
/readyz answers 503 with the reason and the relay retries until it can start.
It never migrates unless --migrate is given.

--metrics-addr serves /metrics (every reliar_outbox_* family from the start),
/healthz (200 while the process runs) and /readyz (200 when the store answers,
the broker is connected, no dispatcher's circuit breaker is open, and not every
destination with rows lacks its stream, exchange or topic). It listens
on loopback by default; in Kubernetes set it to the pod's address (for example
--metrics-addr :9090) so that probes and Prometheus reach it.

New rows are picked up at once through LISTEN/NOTIFY on PostgreSQL (rows
inserted with plain SQL need the notify trigger, see pgstore.EnableNotifyTrigger);
behind PgBouncer in transaction pooling mode, use --no-listen to poll only.

--fair tenant shares every claim among the tenants that have due rows (the
messages' tenant id; rows without one form one tenant), round-robin, so that one
tenant's backlog does not delay the others' messages; --max-in-flight-per-tenant
caps the rows of one tenant a dispatcher holds, so that a tenant whose messages
publish slowly cannot take all of --max-in-flight. It needs a store that can
claim fairly (PostgreSQL); on SQLite or MariaDB the relay exits 2. It cannot be
combined with --ordering per-key.

Logs go to stderr at ` + relayLogLevel + ` by default; they never hold payloads, and URLs are
shown with their secrets masked.`,
		Example: `  # PostgreSQL to NATS JetStream, subjects orders.<message type>
  reliar relay --database-url postgres://relay@db:5432/shop --broker nats://nats:4222 --subject-prefix orders

  # Kafka, one topic per message type, two dispatchers
  reliar relay --database-url postgres://relay@db/shop --schema billing \
    --broker kafka://k1:9092,k2:9092 --topic invoice_issued=invoices --topic billing --dispatchers 2

  # Fair across tenants: a tenant's import does not hold up the others
  reliar relay --database-url postgres://relay@db/shop --broker nats://nats:4222 \
    --fair tenant --max-in-flight-per-tenant 200

  # A webhook, metrics on every interface (Kubernetes)
  RELIAR_WEBHOOK_SECRET=whsec_... reliar relay --database-url postgres://relay@db/shop \
    --broker https://hooks.example.com/orders --metrics-addr :9090`,
		Args: cobra.NoArgs,
	}
	addRelayFlags(cmd, &f)
	showLogLevel(cmd, relayLogLevel)
	cmd.RunE = app.run(func(ctx context.Context, cmd *cobra.Command) error {
		cfg, err := f.config(app, cmd.Flags())
		if err != nil {
			return err
		}
		return relay.Run(ctx, cfg)
	})
	return cmd
}

// addRelayFlags declares the relay's flags on cmd.
func addRelayFlags(cmd *cobra.Command, f *relayFlags) {
	fl := cmd.Flags()
	addDBFlags(cmd, &f.db, true)
	fl.StringVar(&f.brokerURL, "broker", "", "broker URL: nats://, kafka://, amqp://, redis:// or http(s):// (env RELIAR_BROKER)")
	fl.StringVar(&f.brokerOpts.SubjectPrefix, "subject-prefix", "", `NATS: first subject token, subject <prefix>.<message type> (default "reliar")`)
	fl.StringSliceVar(&f.brokerOpts.Topics, "topic", nil, `Kafka: topic of every message, or TYPE=TOPIC for one message type; repeatable (default "reliar")`)
	fl.StringVar(&f.brokerOpts.Exchange, "exchange", "", `RabbitMQ: exchange, "-" for the default exchange (default "reliar")`)
	fl.StringVar(&f.brokerOpts.RoutingKey, "routing-key", "", `RabbitMQ: routing key; {type} is the message type, {key} the ordering key else the conversation id (default "{key}")`)
	fl.StringVar(&f.brokerOpts.Stream, "stream", "", `Redis: stream (default "reliar")`)
	fl.StringSliceVar(&f.brokerOpts.WebhookSecrets, "webhook-secret", nil, "webhook: Standard Webhooks signing secret (whsec_…); repeatable, to rotate")
	fl.BoolVar(&f.brokerOpts.CreateStream, "create-stream", false, `NATS: create a JetStream stream on "<prefix>.>" (file storage, the server's defaults) when no stream captures the prefix's subjects`)

	flagval.Int(fl, &f.dispatchers, "dispatchers", 0, fmt.Sprintf("dispatchers in this process, at most %d; they share one store, one pool and one wake-up listener (default 1)", relay.MaxDispatchers), relay.MaxDispatchers)
	flagval.Int(fl, &f.poolSize, "pool-size", 0, fmt.Sprintf("database connections the relay's pool holds, at most %d; it must serve every dispatcher (default the URL's pool_max_conns, else %d)", maxPoolSize, storeurl.DefaultPoolSize), maxPoolSize)
	addSettingFlags(fl, f)
	fl.BoolVar(&f.noListen, "no-listen", false, "do not LISTEN for new rows; poll only (PgBouncer in transaction pooling mode)")
	fl.BoolVar(&f.asyncCommit, "async-commit", false, "commit claims and outcome writes without waiting for the disk (PostgreSQL; SQLite in WAL mode): a crash of the database's machine can republish, never lose, the last messages (RELIABILITY.md)")

	fl.BoolVar(&f.migrate, "migrate", false, "apply the store's migrations at start-up")
	fl.BoolVar(&f.noMaintainer, "no-maintainer", false, "do not run the maintainer (retention and expiry)")

	flagval.Addr(fl, &f.metricsAddr, "metrics-addr", relay.DefaultMetricsAddr, "address of /metrics, /healthz and /readyz (loopback by default; the pod's address in Kubernetes)")
	fl.StringVar(&f.eventsFile, "events-file", "", "write every dispatcher event to this file as JSON lines (for the chaos checker)")
	_ = fl.MarkHidden("events-file")
}

// maxPoolSize bounds --pool-size.
const maxPoolSize = 1000

// config turns the flags into the relay's configuration, checking every
// value before anything connects; bad values are bad input (exit status
// 2), every problem reported at once.
func (f *relayFlags) config(app *App, flags *pflag.FlagSet) (relay.Config, error) {
	log := app.Log()
	if lf := flags.Lookup("log-level"); lf == nil || !lf.Changed {
		l, err := app.newLogger(relayLogLevel)
		if err != nil {
			return relay.Config{}, exitcode.UsageError(err)
		}
		log = l
	}
	loc, err := app.Location(f.db.url)
	if err != nil {
		return relay.Config{}, err
	}
	if f.brokerURL == "" {
		return relay.Config{}, exitcode.UsageError(errors.New("--broker is required (or RELIAR_BROKER)"))
	}
	settings, problems := f.settings()
	f.brokerOpts.Logger = log
	f.brokerOpts.Concurrency = settings.WithDefaults().MaxInFlight * max(f.dispatchers, 1)
	bl, err := broker.Parse(f.brokerURL, f.brokerOpts)
	if err != nil {
		problems = append(problems, err)
	}
	cfg := relay.Config{
		Store:        loc,
		StoreOptions: storeurl.Options{Schema: f.db.schema, Logger: log, MaxConns: f.poolSize, AsyncCommit: f.asyncCommit},
		Broker:       bl,
		Dispatchers:  f.dispatchers,
		Settings:     settings,
		NoWakeups:    f.noListen,
		Migrate:      f.migrate,
		MetricsAddr:  f.metricsAddr,
		EventsFile:   f.eventsFile,
		Logger:       log,
	}
	if err := f.checkPool(cfg); err != nil {
		problems = append(problems, err)
	}
	if !f.noMaintainer {
		m := outbox.MaintainerSettings{
			PublishedRetention: f.publishedRetention,
			DeadRetention:      f.deadRetention,
			Interval:           f.maintenanceInterval,
		}
		if err := m.Validate(); err != nil {
			problems = append(problems, namedFlags(maintainerSetting, err))
		}
		cfg.Maintainer = &m
	}
	if len(problems) > 0 {
		return relay.Config{}, exitcode.UsageError(joinProblems(problems))
	}
	return cfg, nil
}

// checkPool refuses more dispatchers than the pool can serve.
func (f *relayFlags) checkPool(cfg relay.Config) error {
	pool := cfg.Store.PoolSize(cfg.StoreOptions)
	need := relay.PoolNeed(cfg.Dispatchers)
	if pool > 0 && pool < need {
		return fmt.Errorf("--dispatchers %d needs a pool of at least %d connections (%d per dispatcher, and %d for the maintainer and readiness), but --pool-size (or the URL's pool_max_conns) gives %d: raise --pool-size or lower --dispatchers",
			max(cfg.Dispatchers, 1), need, relay.ConnsPerDispatcher, relay.ConnsShared, pool)
	}
	return nil
}

// settings builds the dispatchers' settings from the flags: zero where a
// flag is unset, so that the dispatcher derives it. Problems are returned,
// every one, with the flags named.
func (f *relayFlags) settings() (outbox.Settings, []error) {
	s := outbox.Settings{
		WorkerID: f.workerID, BatchSize: f.batchSize, MaxInFlight: f.maxInFlight, MaxInFlightPerTenant: f.maxPerTenant,
		PollInterval: f.pollInterval, IdlePollInterval: f.idlePollInterval,
		Lease: f.lease, PublishTimeout: f.publishTimeout, StoreTimeout: f.storeTimeout, DrainTimeout: f.drainTimeout,
		StatsInterval: f.statsInterval, MaxClaims: f.maxClaims, BreakerThreshold: f.breakerThreshold,
	}
	if f.maxAttempts != 0 {
		s.Retry = outbox.ExponentialBackoff{MaxAttempts: f.maxAttempts}
	}
	var problems []error
	switch strings.ToLower(f.ordering) {
	case "", "unordered":
		s.Ordering = outbox.Unordered
	case "per-key", "perkey":
		s.Ordering = outbox.PerKey
	default:
		problems = append(problems, fmt.Errorf("--ordering %q: want unordered or per-key", f.ordering))
	}
	if fair, ok := outbox.ParseFairness(strings.ToLower(strings.TrimSpace(f.fair))); ok {
		s.Fairness = fair
	} else {
		problems = append(problems, fmt.Errorf("--fair %q: want unordered or tenant", f.fair))
	}
	// The store's capabilities are known once it is open: the relay checks
	// them then (per-key ordering, fair claims).
	if err := s.Validate(outbox.Capabilities{PerKeyOrdering: true, TenantFairness: true}); err != nil {
		problems = append(problems, namedFlags(dispatcherSetting, err))
	}
	return s, problems
}

// joinProblems makes one error of every problem found, on one line.
func joinProblems(problems []error) error {
	var flat []error
	for _, p := range problems {
		if j, ok := p.(interface{ Unwrap() []error }); ok {
			flat = append(flat, j.Unwrap()...)
		} else {
			flat = append(flat, p)
		}
	}
	if len(flat) == 1 {
		return flat[0]
	}
	return &problemList{flat}
}

// problemList is several problems of one command's input, shown on one
// line separated by semicolons.
type problemList struct{ errs []error }

func (p *problemList) Error() string {
	parts := make([]string, len(p.errs))
	for i, e := range p.errs {
		parts[i] = e.Error()
	}
	return strings.Join(parts, "; ")
}

func (p *problemList) Unwrap() []error { return p.errs }

// showLogLevel makes cmd's help state level as the default of the global
// --log-level, which cmd uses when the flag is not given (relay and serve
// log at info where operator commands stay at warn).
func showLogLevel(cmd *cobra.Command, level string) {
	cmd.SetHelpFunc(func(c *cobra.Command, args []string) {
		lf := c.Flag("log-level")
		if lf == nil {
			c.Parent().HelpFunc()(c, args)
			return
		}
		saved := lf.DefValue
		lf.DefValue = level
		defer func() { lf.DefValue = saved }()
		c.Parent().HelpFunc()(c, args)
	})
}
