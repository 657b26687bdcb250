package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/spf13/cobra"

	"github.com/reliar/reliar/cmd/reliar/internal/doctor"
	"github.com/reliar/reliar/cmd/reliar/internal/exitcode"
	"github.com/reliar/reliar/cmd/reliar/internal/flagval"
	"github.com/reliar/reliar/cmd/reliar/internal/ops"
	"github.com/reliar/reliar/cmd/reliar/internal/storeurl"
	"github.com/reliar/reliar/store/pgstore"
)

// doctorConnectTimeout bounds the connection when the URL sets none.
const doctorConnectTimeout = 10 * time.Second

// ErrUnhealthy is matched (with errors.Is) when doctor found a red check.
var ErrUnhealthy = errors.New("the outbox table is unhealthy")

func newDoctorCommand(app *App) *cobra.Command {
	var (
		db      dbFlags
		th      doctor.Thresholds
		timeout time.Duration
		asJSON  bool
		bk      doctorBroker
	)
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check a PostgreSQL outbox table's health and explain the fixes",
		Long: `doctor checks a PostgreSQL outbox table and explains what it finds, each check
with a verdict (ok, warn or red) and, when not ok, why it matters and a fix:

` + doctor.CatalogText(80) + `  broker: …           with --broker, what the relay needs there: a JetStream
                      stream capturing <--subject-prefix>.>, the RabbitMQ
                      --exchange, the Kafka --topic topics

Ages (of the oldest transaction, of a lapsed lease, of the oldest due row) warn
from --warn-age and are red from --red-age. doctor only reads; it is
PostgreSQL-specific, and refuses other databases with exit status 2 (use
reliar stats and reliar dead list there).

The last line on stdout is
  doctor: N ok, N warn, N red
With --json, one object: {"store","checks":[{"name","verdict","found","why",
"fix"}…],"ok","warn","red"}.

Exit status: 0 when no check is red, 1 when one is (or the database fails), 2
on bad input.`,
		Example: `  reliar doctor --database-url postgres://app@db:5432/orders --schema billing
  reliar doctor --database-url postgres://app@db:5432/orders --warn-age 30s --red-age 5m --json
  reliar doctor --database-url postgres://app@db:5432/shop --broker nats://nats:4222 --subject-prefix shop`,
		Args: cobra.NoArgs,
	}
	addDBFlags(cmd, &db, true)
	f := cmd.Flags()
	flagval.Duration(f, &th.WarnAge, "warn-age", doctor.DefaultWarnAge, "age from which a transaction, lapsed lease or due row warns", 0)
	flagval.Duration(f, &th.RedAge, "red-age", doctor.DefaultRedAge, "age from which it is red", 0)
	flagval.Duration(f, &timeout, "timeout", time.Minute, "longest time to connect and check", 0)
	f.BoolVar(&asJSON, "json", false, "print the result as one JSON document")
	bk.addFlags(f)

	cmd.RunE = app.run(func(ctx context.Context, cmd *cobra.Command) error {
		switch {
		case th.WarnAge > th.RedAge:
			return exitcode.UsageError(fmt.Errorf("--warn-age %s is above --red-age %s", ops.FormatDuration(th.WarnAge), ops.FormatDuration(th.RedAge)))
		}
		loc, err := app.Location(db.url)
		if err != nil {
			return err
		}
		if loc.Driver() != "postgres" {
			return exitcode.UsageError(fmt.Errorf("doctor checks PostgreSQL outbox tables only, not %s (%s): use reliar stats and reliar dead list there", loc.Driver(), loc))
		}
		schema := db.schema
		if schema == "" {
			schema = pgstore.DefaultSchema
		}
		if err := pgstore.ValidateSchema(schema); err != nil {
			return exitcode.UsageError(err)
		}
		bloc, err := bk.location()
		if err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		pool, where, err := doctorPool(ctx, db.url, loc)
		if err != nil {
			return err
		}
		defer pool.Close()
		facts, err := doctor.Gather(ctx, pool, schema, th.WarnAge, app.storeLogger(ctx))
		if err != nil {
			return err
		}
		checks := doctor.Evaluate(facts, th)
		if bloc != nil {
			checks = append(checks, doctor.BrokerChecks(ctx, *bloc)...)
		}
		report := doctor.NewReport(fmt.Sprintf("postgres %s schema %q", where, schema), checks)
		out := app.Printer(cmd, asJSON)
		if asJSON {
			err = out.Document(report)
		} else {
			_ = out.Line("doctor: %s", report.Store)
			for _, l := range report.Lines() {
				if err := out.Line("%s", l); err != nil {
					return err
				}
			}
			err = out.Final("%s", report.Summary())
		}
		if err != nil {
			return err
		}
		if !report.Healthy() {
			return exitcode.FailureError(fmt.Errorf("%w: %d red checks", ErrUnhealthy, report.Red))
		}
		return nil
	})
	return cmd
}

// doctorPool connects a small pool to the database of raw, and returns it
// with host:port/database for the report.
func doctorPool(ctx context.Context, raw string, loc storeurl.Location) (*pgxpool.Pool, string, error) {
	cfg, err := pgxpool.ParseConfig(raw)
	if err != nil {
		return nil, "", exitcode.UsageError(fmt.Errorf("database URL %s: %w", loc, errors.Unwrap(err)))
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = doctorConnectTimeout
	}
	cfg.MaxConns = 2
	if _, set := cfg.ConnConfig.RuntimeParams["application_name"]; !set {
		cfg.ConnConfig.RuntimeParams["application_name"] = "reliar doctor"
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, "", &storeurl.ConnectError{Where: loc.String(), Err: err}
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, "", &storeurl.ConnectError{Where: loc.String(), Err: err}
	}
	return pool, fmt.Sprintf("%s:%d/%s", cfg.ConnConfig.Host, cfg.ConnConfig.Port, cfg.ConnConfig.Database), nil
}
