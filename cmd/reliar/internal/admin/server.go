package admin

import (
	"context"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/reliar/reliar/cmd/reliar/internal/ops"
	"github.com/reliar/reliar/outbox"
)

// Store is what the admin page needs of an outbox store: its gauges and its
// dead letters. Every outbox.Store satisfies it. A store that also lists
// its tenants (outboxdriver.TenantStatser) gets the table of the tenants
// with due rows on the overview page.
type Store interface {
	// Stats counts the rows by state.
	Stats(ctx context.Context) (outbox.Stats, error)
	outbox.DeadLetters
}

// MinTokenLength is the shortest access token New accepts.
const MinTokenLength = 16

// Defaults of Config.
const (
	DefaultSampleInterval = 10 * time.Second
	DefaultHistory        = time.Hour
	DefaultStoreTimeout   = 10 * time.Second
	DefaultActionTimeout  = 90 * time.Second
)

// ErrBadConfig is matched (with errors.Is) by the errors of New.
var ErrBadConfig = errors.New("bad admin configuration")

// Config configures a Server.
type Config struct {
	// Store is the outbox the page shows and acts on. Required.
	Store Store
	// Token is the access token, at least MinTokenLength bytes. Required.
	Token string
	// ReadOnly refuses every write (403) and hides the buttons.
	ReadOnly bool
	// Logger receives the audit records (info) and errors. Defaults to
	// slog.Default().
	Logger *slog.Logger
	// Database names the database in the dashboard's header, secrets
	// redacted. It is shown only after login.
	Database string
	// SampleInterval is how often Serve samples the gauges for the chart.
	// Defaults to DefaultSampleInterval.
	SampleInterval time.Duration
	// History is the span the chart shows. Defaults to DefaultHistory.
	History time.Duration
	// StoreTimeout bounds each read of the store. Defaults to
	// DefaultStoreTimeout.
	StoreTimeout time.Duration
	// ActionTimeout bounds one retry or purge request, all its batches
	// together. Defaults to DefaultActionTimeout.
	ActionTimeout time.Duration
	// Published, when set, counts the rows published after from and at or
	// before to, by the store's clock: the page then charts the publish
	// rate (the rows by state alone only give the net drain). reliar
	// serve sets it.
	Published func(ctx context.Context, from, to time.Time) (int64, error)
	// Tenants is how many tenants with due rows the overview lists, the
	// longest waiting first, when the store lists them; outbox.Off hides
	// them. Defaults to ops.DefaultTenants, at most ops.MaxTenants.
	Tenants int
}

// tenants is how many tenants to list; 0 when the list is off.
func (c Config) tenants() int {
	switch {
	case c.Tenants == outbox.Off:
		return 0
	case c.Tenants == 0:
		return ops.DefaultTenants
	}
	return c.Tenants
}

// withDefaults returns a copy of c with its zero fields set to defaults.
func (c Config) withDefaults() Config {
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.SampleInterval == 0 {
		c.SampleInterval = DefaultSampleInterval
	}
	if c.History == 0 {
		c.History = DefaultHistory
	}
	if c.StoreTimeout == 0 {
		c.StoreTimeout = DefaultStoreTimeout
	}
	if c.ActionTimeout == 0 {
		c.ActionTimeout = DefaultActionTimeout
	}
	return c
}

// validate reports every invalid field at once, as an errors.Join of one
// error per problem, each matching ErrBadConfig; it changes nothing.
func (c Config) validate() error {
	var problems []error
	bad := func(format string, args ...any) {
		problems = append(problems, fmt.Errorf("%w: %s", ErrBadConfig, fmt.Sprintf(format, args...)))
	}
	if c.Store == nil {
		bad("no store")
	}
	switch {
	case c.Token == "":
		bad("no access token")
	case len(c.Token) < MinTokenLength:
		bad("the access token has %d characters, fewer than %d", len(c.Token), MinTokenLength)
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{
		{"SampleInterval", c.SampleInterval}, {"History", c.History},
		{"StoreTimeout", c.StoreTimeout}, {"ActionTimeout", c.ActionTimeout},
	} {
		if d.v < 0 {
			bad("negative duration: %s %v", d.name, d.v)
		}
	}
	if (c.Tenants < 0 && c.Tenants != outbox.Off) || c.Tenants > ops.MaxTenants {
		bad("tenants %d: want 0 to %d, or outbox.Off", c.Tenants, ops.MaxTenants)
	}
	if c.SampleInterval >= 0 && c.History >= 0 && c.History < c.SampleInterval {
		bad("history %v is shorter than the sample interval %v", c.History, c.SampleInterval)
	}
	return errors.Join(problems...)
}

// Server is the admin page: an http.Handler, and the sampler that feeds
// its chart.
type Server struct {
	cfg      Config
	log      *slog.Logger
	sessions *sessions
	guard    *guard
	history  *history
	pages    *template.Template
	handler  http.Handler
	// inflight counts the requests being served, so that Serve returns
	// only after the last one.
	inflight tracker
}

// New checks cfg, reporting every problem of it at once (each matching
// ErrBadConfig), and builds a Server.
func New(cfg Config) (*Server, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	pages, err := parseTemplates()
	if err != nil {
		return nil, err
	}
	s := &Server{
		cfg:      cfg,
		log:      cfg.Logger,
		sessions: newSessions(sessionTTL, maxSessions, time.Now),
		guard:    newGuard(maxFailures, failureWindow, maxGuarded, time.Now),
		history:  newHistory(int(cfg.History/cfg.SampleInterval) + 1),
		pages:    pages,
	}
	s.handler = s.routes()
	return s, nil
}

// Handler returns the server's HTTP handler. It does not sample the gauges:
// Serve does.
func (s *Server) Handler() http.Handler { return s.handler }

// HTTP server timeouts. Writes may take as long as one action, plus a
// margin to answer.
const (
	readHeaderTimeout = 5 * time.Second
	readTimeout       = 15 * time.Second
	idleTimeout       = 60 * time.Second
	shutdownTimeout   = 10 * time.Second
	maxHeaderBytes    = 64 << 10
)

// Serve serves the page on ln and samples the gauges every SampleInterval
// until ctx is done, then shuts down: requests in progress get
// shutdownTimeout to finish, after which they are cancelled. It returns nil
// after a shutdown, once every goroutine it started has returned, or the
// error that stopped the server.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	base, cancelBase := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelBase()
	srv := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      s.cfg.ActionTimeout + 15*time.Second,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
		BaseContext:       func(net.Listener) context.Context { return base },
	}

	sampleCtx, stopSampling := context.WithCancel(ctx)
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		s.sampleEvery(sampleCtx, s.cfg.SampleInterval)
	}()

	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	var err error
	select {
	case err = <-served:
		err = fmt.Errorf("admin server: %w", err)
	case <-ctx.Done():
		s.log.Info("admin page shutting down")
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
		if serr := srv.Shutdown(sctx); serr != nil {
			_ = srv.Close()
		}
		cancel()
		<-served
	}
	stopSampling()
	cancelBase()
	s.inflight.closeAndWait()
	<-sampled
	return err
}
