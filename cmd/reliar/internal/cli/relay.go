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
	"github.com/reliar/reliar/cmd/reliar/internal/relay"
	"github.com/reliar/reliar/cmd/reliar/internal/storeurl"
	"github.com/reliar/reliar/outbox"
)

// relayLogLevel is the relay's log level unless --log-level (or its
// variable or key) says otherwise: a long-running process reports its life
// at info, where operator commands stay quiet at warn.
const relayLogLevel = "info"

// relayFlags are the flags of reliar relay.
type relayFlags struct {
	db         dbFlags
	brokerURL  string
	brokerOpts broker.Options

	dispatchers      int
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
	noListen         bool

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
  nats://host:4222    JetStream; subject <--subject-prefix>.<message type>
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
the broker is connected and no dispatcher's circuit breaker is open). It listens
on loopback by default; in Kubernetes set it to the pod's address (for example
--metrics-addr :9090) so that probes and Prometheus reach it.

New rows are picked up at once through LISTEN/NOTIFY on PostgreSQL (rows
inserted with plain SQL need the notify trigger, see pgstore.EnableNotifyTrigger);
behind PgBouncer in transaction pooling mode, use --no-listen to poll only.

Logs go to stderr at info by default; they never hold payloads, and URLs are
shown with their secrets masked.`,
		Example: `  # PostgreSQL to NATS JetStream, subjects orders.<message type>
  reliar relay --database-url postgres://relay@db:5432/shop --broker nats://nats:4222 --subject-prefix orders

  # Kafka, one topic per message type, two dispatchers
  reliar relay --database-url postgres://relay@db/shop --schema billing \
    --broker kafka://k1:9092,k2:9092 --topic invoice_issued=invoices --topic billing --dispatchers 2

  # A webhook, metrics on every interface (Kubernetes)
  RELIAR_WEBHOOK_SECRET=whsec_... reliar relay --database-url postgres://relay@db/shop \
    --broker https://hooks.example.com/orders --metrics-addr :9090`,
		Args: cobra.NoArgs,
	}
	addRelayFlags(cmd, &f)
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
	d := outbox.DefaultSettings()
	fl := cmd.Flags()
	addDBFlags(cmd, &f.db, true)
	fl.StringVar(&f.brokerURL, "broker", "", "broker URL: nats://, kafka://, amqp://, redis:// or http(s):// (env RELIAR_BROKER)")
	fl.StringVar(&f.brokerOpts.SubjectPrefix, "subject-prefix", "", `NATS: first subject token, subject <prefix>.<message type> (default "reliar")`)
	fl.StringSliceVar(&f.brokerOpts.Topics, "topic", nil, `Kafka: topic of every message, or TYPE=TOPIC for one message type; repeatable (default "reliar")`)
	fl.StringVar(&f.brokerOpts.Exchange, "exchange", "", `RabbitMQ: exchange, "-" for the default exchange (default "reliar")`)
	fl.StringVar(&f.brokerOpts.RoutingKey, "routing-key", "", `RabbitMQ: routing key; {type} is the message type, {key} the ordering key else the conversation id (default "{key}")`)
	fl.StringVar(&f.brokerOpts.Stream, "stream", "", `Redis: stream (default "reliar")`)
	fl.StringSliceVar(&f.brokerOpts.WebhookSecrets, "webhook-secret", nil, "webhook: Standard Webhooks signing secret (whsec_…); repeatable, to rotate")

	fl.IntVar(&f.dispatchers, "dispatchers", 1, "dispatchers in this process")
	fl.IntVar(&f.batchSize, "batch-size", d.BatchSize, "rows one claim asks for")
	fl.IntVar(&f.maxInFlight, "max-in-flight", d.MaxInFlight, "rows a dispatcher holds at once")
	fl.DurationVar(&f.pollInterval, "poll-interval", d.PollInterval, "wait after a claim that returned fewer rows than asked")
	fl.DurationVar(&f.idlePollInterval, "idle-poll-interval", d.IdlePollInterval, "wait after an empty claim, and between start-up attempts")
	fl.DurationVar(&f.lease, "lease", d.Lease, "how long a claim holds a row (renewed every lease/2)")
	fl.DurationVar(&f.publishTimeout, "publish-timeout", d.PublishTimeout, "bound of one publish")
	fl.DurationVar(&f.storeTimeout, "store-timeout", d.StoreTimeout, "bound of every store call")
	fl.DurationVar(&f.drainTimeout, "drain-timeout", d.DrainTimeout, "bound of the whole shutdown after SIGTERM")
	fl.DurationVar(&f.statsInterval, "stats-interval", d.StatsInterval, "how often the table's gauges are read (0 disables)")
	fl.IntVar(&f.maxAttempts, "max-attempts", outbox.DefaultBackoff().MaxAttempts, "failed publishes before a message is dead")
	fl.IntVar(&f.maxClaims, "max-claims", d.MaxClaims, "lapsed leases before a message is dead (it keeps crashing or hanging the relay)")
	fl.IntVar(&f.breakerThreshold, "breaker-threshold", d.BreakerThreshold, "consecutive transient failures that open the circuit breaker (0 disables it)")
	fl.StringVar(&f.ordering, "ordering", "unordered", "unordered, or per-key: rows of one ordering key published one at a time, in order")
	fl.BoolVar(&f.noListen, "no-listen", false, "do not LISTEN for new rows; poll only (PgBouncer in transaction pooling mode)")

	fl.BoolVar(&f.migrate, "migrate", false, "apply the store's migrations at start-up")
	fl.BoolVar(&f.noMaintainer, "no-maintainer", false, "do not run the maintainer (retention and expiry)")
	fl.DurationVar(&f.publishedRetention, "published-retention", outbox.DefaultPublishedRetention, "delete published rows older than this (0 keeps them)")
	fl.DurationVar(&f.deadRetention, "dead-retention", outbox.DefaultDeadRetention, "delete dead rows older than this (0 keeps them)")
	fl.DurationVar(&f.maintenanceInterval, "maintenance-interval", outbox.DefaultMaintainerSettings().Interval, "time between maintenance passes")

	fl.StringVar(&f.metricsAddr, "metrics-addr", relay.DefaultMetricsAddr, "address of /metrics, /healthz and /readyz (loopback by default; the pod's address in Kubernetes)")
	fl.StringVar(&f.eventsFile, "events-file", "", "write every dispatcher event to this file as JSON lines (for the chaos checker)")
	_ = fl.MarkHidden("events-file")
}

// config turns the flags into the relay's configuration; bad values are
// bad input (exit status 2).
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
	f.brokerOpts.Logger = log
	f.brokerOpts.Concurrency = f.maxInFlight * max(f.dispatchers, 1)
	bl, err := broker.Parse(f.brokerURL, f.brokerOpts)
	if err != nil {
		return relay.Config{}, exitcode.UsageError(err)
	}
	settings, err := f.settings()
	if err != nil {
		return relay.Config{}, err
	}
	cfg := relay.Config{
		Store:        loc,
		StoreOptions: storeurl.Options{Schema: f.db.schema, Logger: log},
		Broker:       bl,
		Dispatchers:  f.dispatchers,
		Settings:     settings,
		NoWakeups:    f.noListen,
		Migrate:      f.migrate,
		MetricsAddr:  f.metricsAddr,
		EventsFile:   f.eventsFile,
		Logger:       log,
	}
	if !f.noMaintainer {
		m, err := f.maintainer()
		if err != nil {
			return relay.Config{}, err
		}
		cfg.Maintainer = &m
	}
	return cfg, nil
}

// settings builds the dispatchers' settings from the flags.
func (f *relayFlags) settings() (outbox.Settings, error) {
	if f.dispatchers <= 0 {
		return outbox.Settings{}, exitcode.UsageError(fmt.Errorf("--dispatchers must be positive, not %d", f.dispatchers))
	}
	s := outbox.DefaultSettings()
	s.BatchSize, s.MaxInFlight = f.batchSize, f.maxInFlight
	s.PollInterval, s.IdlePollInterval = f.pollInterval, f.idlePollInterval
	s.Lease, s.PublishTimeout, s.StoreTimeout, s.DrainTimeout = f.lease, f.publishTimeout, f.storeTimeout, f.drainTimeout
	s.StatsInterval, s.MaxClaims, s.BreakerThreshold = f.statsInterval, f.maxClaims, f.breakerThreshold
	if s.StatsInterval == 0 {
		s.StatsInterval = outbox.Off
	}
	if s.BreakerThreshold == 0 {
		s.BreakerThreshold = outbox.Off
	}
	retry := outbox.DefaultBackoff()
	retry.MaxAttempts = f.maxAttempts
	s.Retry = retry
	switch strings.ToLower(f.ordering) {
	case "unordered":
		s.Ordering = outbox.Unordered
	case "per-key", "perkey":
		s.Ordering = outbox.PerKey
	default:
		return s, exitcode.UsageError(fmt.Errorf("--ordering %q: want unordered or per-key", f.ordering))
	}
	if err := s.Validate(outbox.Capabilities{PerKeyOrdering: true}); err != nil {
		return s, exitcode.UsageError(settingsError(err))
	}
	return s, nil
}

// maintainer builds the maintainer's settings from the flags.
func (f *relayFlags) maintainer() (outbox.MaintainerSettings, error) {
	m := outbox.DefaultMaintainerSettings()
	m.Interval = f.maintenanceInterval
	if m.Interval <= 0 {
		return m, exitcode.UsageError(fmt.Errorf("--maintenance-interval must be positive, not %v", m.Interval))
	}
	for _, r := range []struct {
		flag string
		v    time.Duration
		dst  *time.Duration
	}{
		{"--published-retention", f.publishedRetention, &m.PublishedRetention},
		{"--dead-retention", f.deadRetention, &m.DeadRetention},
	} {
		switch {
		case r.v < 0:
			return m, exitcode.UsageError(fmt.Errorf("%s must not be negative, not %v (0 keeps rows forever)", r.flag, r.v))
		case r.v == 0:
			*r.dst = outbox.KeepForever
		default:
			*r.dst = r.v
		}
	}
	return m, nil
}

// settingFlags names the flag of each dispatcher setting, for errors.
var settingFlags = map[string]string{
	"BatchSize": "--batch-size", "MaxInFlight": "--max-in-flight", "PollInterval": "--poll-interval",
	"IdlePollInterval": "--idle-poll-interval", "Lease": "--lease", "PublishTimeout": "--publish-timeout",
	"StoreTimeout": "--store-timeout", "DrainTimeout": "--drain-timeout", "MaxClaims": "--max-claims",
	"BreakerThreshold": "--breaker-threshold", "Retry.MaxAttempts": "--max-attempts",
}

// settingsError names the flag behind an invalid dispatcher setting.
func settingsError(err error) error {
	var ce *outbox.ConfigError
	if errors.As(err, &ce) {
		if flag, ok := settingFlags[ce.Field]; ok {
			return fmt.Errorf("%s: %w", flag, err)
		}
	}
	return err
}
