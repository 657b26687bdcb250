package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/spf13/cobra"

	"github.com/reliar/reliar/cmd/reliar/internal/admin"
	"github.com/reliar/reliar/cmd/reliar/internal/exitcode"
	"github.com/reliar/reliar/cmd/reliar/internal/flagval"
	"github.com/reliar/reliar/cmd/reliar/internal/ops"
)

// serveLogLevel is serve's log level unless --log-level says otherwise: the
// audit records of its actions are written at info.
const serveLogLevel = "info"

// defaultServeAddr is where serve listens unless --addr says otherwise:
// loopback, so that nothing is exposed by accident.
const defaultServeAddr = "127.0.0.1:8080"

// serveFlags are the flags of reliar serve.
type serveFlags struct {
	db             dbFlags
	addr           string
	token          string
	readOnly       bool
	sampleInterval time.Duration
	tenants        int
}

func newServeCommand(app *App) *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the admin page: gauges, throughput and dead letters",
		Long: `serve runs the admin page of an outbox table: the rows by state, the lag, a chart
of the last hour (sampled every --sample-interval), and the dead letters, which
can be filtered by type and tenant, inspected, retried and purged (one, a
selection, or every row matching the filter, in bounded batches). On a store
that lists its tenants (PostgreSQL), the overview also shows the tenants with
due rows, the longest waiting first: at most --tenants of them ("off" hides
them).

Every request needs the access token (--token, better RELIAR_TOKEN, at least 16
characters): browsers log in with it through a form, which sets an HttpOnly,
SameSite=Strict session cookie; API clients send "Authorization: Bearer TOKEN".
After ten failed logins or bearer tokens within a minute from one address, that
address is answered 429 with Retry-After until the minute is over, and the
burst is logged once. Nothing about the installation (database, host, schema)
is shown before login, and no directory is ever listed.
The JSON API:
  GET  /api/stats                  the gauges and tenants (as 'reliar stats --json') and their history
  GET  /api/dead?type=&tenant=&after=&limit=
                                   a page of dead letters (as 'reliar dead list --json')
  GET  /api/dead/{id}/payload?seq=N
                                   one dead letter's payload
  POST /api/dead/retry, /api/dead/purge
                                   {"ids":[...]} or {"all_matching":true,"type":"...","tenant":"..."}
State-changing requests from another site are refused, and browser sessions
must send their anti-forgery token. --read-only refuses every change (403) and
hides the buttons. Each action is logged at info on stderr (what, how many; never
a payload).

It listens on loopback by default; to expose it, put it behind a TLS proxy.
SIGINT or SIGTERM shuts it down gracefully.

Exit status: 0 after a shutdown, 1 when the database cannot be opened or the
address cannot be listened on, 2 on bad input (no token, a bad URL or address).`,
		Example: `  RELIAR_TOKEN=$(openssl rand -hex 24) reliar serve --database-url postgres://app@db/orders
  reliar serve --database-url sqlite://orders.db --addr 127.0.0.1:9000 --read-only
  curl -H "Authorization: Bearer $RELIAR_TOKEN" http://127.0.0.1:8080/api/stats`,
		Args: cobra.NoArgs,
	}
	addDBFlags(cmd, &f.db, true)
	fl := cmd.Flags()
	flagval.Addr(fl, &f.addr, "addr", defaultServeAddr, "address to listen on (loopback by default)")
	fl.StringVar(&f.token, "token", "", "access token, at least 16 characters (prefer env RELIAR_TOKEN to the command line)")
	fl.BoolVar(&f.readOnly, "read-only", false, "refuse every retry and purge, and hide their buttons")
	flagval.Duration(fl, &f.sampleInterval, "sample-interval", admin.DefaultSampleInterval, "how often the chart's gauges are sampled, at most 1h", time.Hour)
	flagval.Int(fl, &f.tenants, "tenants", ops.DefaultTenants,
		fmt.Sprintf(`tenants with due rows the overview lists, the longest waiting first, at most %d; "off" hides them (PostgreSQL only)`, ops.MaxTenants),
		ops.MaxTenants, flagval.Off)
	showLogLevel(cmd, serveLogLevel)

	cmd.RunE = app.run(func(ctx context.Context, cmd *cobra.Command) error {
		if err := f.validate(); err != nil {
			return err
		}
		log := app.Log()
		if lf := cmd.Flags().Lookup("log-level"); lf == nil || !lf.Changed {
			l, err := app.newLogger(serveLogLevel)
			if err != nil {
				return exitcode.UsageError(err)
			}
			log = l
		}
		s, err := app.openOpsStore(ctx, f.db)
		if err != nil {
			return err
		}
		defer s.close(ctx)
		srv, err := admin.New(admin.Config{
			Store:          s.store,
			Token:          f.token,
			ReadOnly:       f.readOnly,
			Logger:         log,
			Database:       s.backend.Describe(),
			SampleInterval: f.sampleInterval,
			Tenants:        f.tenants,
			Published:      s.backend.CountPublished,
		})
		if err != nil {
			return exitcode.UsageError(err)
		}
		ln, err := net.Listen("tcp", f.addr)
		if err != nil {
			return fmt.Errorf("admin page: %w", err)
		}
		if !isLoopback(ln.Addr()) {
			log.Warn("the admin page listens beyond loopback: serve it behind TLS", "addr", ln.Addr().String())
		}
		log.Info("admin page listening", "url", "http://"+ln.Addr().String()+"/", "store", s.backend.Describe(), "read_only", f.readOnly)
		return srv.Serve(ctx, ln)
	})
	return cmd
}

// validate checks the flags that need no database; bad values exit 2.
func (f *serveFlags) validate() error {
	switch {
	case f.token == "":
		return exitcode.UsageError(errors.New("--token is required (or RELIAR_TOKEN): the admin page is never served without authentication"))
	case len(f.token) < admin.MinTokenLength:
		return exitcode.UsageError(fmt.Errorf("--token must have at least %d characters, not %d", admin.MinTokenLength, len(f.token)))
	}
	return nil
}

// isLoopback reports whether addr is a loopback address.
func isLoopback(addr net.Addr) bool {
	tcp, ok := addr.(*net.TCPAddr)
	return ok && tcp.IP.IsLoopback()
}
