package relay

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/cmd/reliar/internal/broker"
	"github.com/reliar/reliar/cmd/reliar/internal/exitcode"
	"github.com/reliar/reliar/cmd/reliar/internal/storeurl"
	"github.com/reliar/reliar/outbox"
	"github.com/reliar/reliar/outbox/memstore"
	"github.com/reliar/reliar/store/mysqlstore"
	"github.com/reliar/reliar/store/pgstore"
	"github.com/reliar/reliar/store/sqlitestore"
)

// quiet is a logger that discards everything.
var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// validConfig returns a configuration that validates, without services.
func validConfig(t *testing.T) Config {
	t.Helper()
	loc, err := storeurl.Parse("postgres://postgres@127.0.0.1:5432/test")
	if err != nil {
		t.Fatal(err)
	}
	bl, err := broker.Parse("nats://127.0.0.1:4222", broker.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m := outbox.DefaultMaintainerSettings()
	return Config{Store: loc, Broker: bl, Settings: outbox.DefaultSettings(), Maintainer: &m, Logger: quiet}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name   string
		change func(c *Config)
		ok     bool
	}{
		{"valid", func(*Config) {}, true},
		{"no store", func(c *Config) { c.Store = storeurl.Location{} }, false},
		{"no broker", func(c *Config) { c.Broker = broker.Location{} }, false},
		{"negative dispatchers", func(c *Config) { c.Dispatchers = -1 }, false},
		{"negative probe interval", func(c *Config) { c.ProbeInterval = -time.Second }, false},
		{"metrics address without port", func(c *Config) { c.MetricsAddr = "localhost" }, false},
		{"bad settings", func(c *Config) { c.Settings.BatchSize = -1 }, false},
		{"zero settings", func(c *Config) { c.Settings = outbox.Settings{} }, true},
		{"bad maintainer", func(c *Config) { c.Maintainer.Interval = -time.Second }, false},
		{"zero maintainer", func(c *Config) { c.Maintainer = &outbox.MaintainerSettings{} }, true},
		{"no maintainer", func(c *Config) { c.Maintainer = nil }, true},
		// Fair claims need the store's capability, known once it is open.
		{"fair", func(c *Config) { c.Settings.Fairness, c.Settings.MaxInFlightPerTenant = outbox.FairnessTenant, 5 }, true},
		{"per-tenant cap without fair", func(c *Config) { c.Settings.MaxInFlightPerTenant = 5 }, false},
		{"fair and per-key", func(c *Config) { c.Settings.Fairness, c.Settings.Ordering = outbox.FairnessTenant, outbox.PerKey }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := validConfig(t)
			tt.change(&c)
			err := c.validate()
			if tt.ok != (err == nil) || (err != nil && !errors.Is(err, ErrInvalidConfig)) {
				t.Fatalf("validate = %v, want ok=%v", err, tt.ok)
			}
		})
	}
}

// Every problem of one Config is reported at once: the relay's own, the
// dispatcher settings' and the maintainer's, each matching
// ErrInvalidConfig, the settings' also their *outbox.ConfigError.
func TestConfigValidateReportsEveryProblem(t *testing.T) {
	tests := []struct {
		name     string
		change   func(c *Config)
		want     []string
		settings []string // fields of the *outbox.ConfigErrors, in order; "" for none
	}{
		{"no store and negative probe interval", func(c *Config) {
			c.Store = storeurl.Location{}
			c.ProbeInterval = -time.Second
		}, []string{"no database URL", "probe interval"}, []string{"", ""}},
		{"too many dispatchers and a metrics address without port", func(c *Config) {
			c.Dispatchers = MaxDispatchers + 1
			c.MetricsAddr = "localhost"
		}, []string{"more than", "metrics address"}, []string{"", ""}},
		{"no broker, two bad settings and a bad maintainer", func(c *Config) {
			c.Broker = broker.Location{}
			c.Settings.BatchSize = -1
			c.Settings.PollInterval = -time.Second
			c.Maintainer.Interval = -time.Second
		}, []string{"no broker URL", "BatchSize", "PollInterval", "maintainer: outbox: invalid settings: Interval"},
			[]string{"", "BatchSize", "PollInterval", "Interval"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := validConfig(t)
			tt.change(&c)
			err := c.validate()
			j, ok := err.(interface{ Unwrap() []error })
			if !ok || len(j.Unwrap()) != len(tt.want) {
				t.Fatalf("validate = %v; want %d problems joined", err, len(tt.want))
			}
			for i, e := range j.Unwrap() {
				if !errors.Is(e, ErrInvalidConfig) || !strings.Contains(e.Error(), tt.want[i]) {
					t.Errorf("problem %d = %v; want ErrInvalidConfig with %q", i, e, tt.want[i])
				}
				var ce *outbox.ConfigError
				if got := errors.As(e, &ce); got != (tt.settings[i] != "") || (got && ce.Field != tt.settings[i]) {
					t.Errorf("problem %d = %v; want an *outbox.ConfigError about %q", i, e, tt.settings[i])
				}
				if tt.settings[i] != "" && !errors.Is(e, outbox.ErrInvalidSettings) {
					t.Errorf("problem %d = %v; want outbox.ErrInvalidSettings", i, e)
				}
			}
		})
	}
}

func TestConfigDefaults(t *testing.T) {
	var c Config
	if c.dispatchers() != 1 || c.metricsAddr() != DefaultMetricsAddr || c.probeInterval() != DefaultProbeInterval || c.logger() == nil {
		t.Fatalf("defaults: %d %q %v", c.dispatchers(), c.metricsAddr(), c.probeInterval())
	}
	for _, tt := range []struct{ idle, want time.Duration }{
		{0, time.Second}, // the default idle poll interval
		{time.Millisecond, 10 * time.Millisecond},
		{200 * time.Millisecond, 200 * time.Millisecond},
		{time.Minute, maxRetryInterval},
	} {
		c.Settings.IdlePollInterval = tt.idle
		if got := c.retryInterval(); got != tt.want {
			t.Errorf("retryInterval with idle %v = %v, want %v", tt.idle, got, tt.want)
		}
	}
}

func TestRunRefusesBadConfig(t *testing.T) {
	c := validConfig(t)
	c.Settings.Lease = time.Second
	if code := exitcode.Code(Run(t.Context(), c), 0); code != exitcode.Usage {
		t.Fatalf("exit status %d, want %d", code, exitcode.Usage)
	}
	c = validConfig(t)
	c.EventsFile = t.TempDir() // a directory cannot be opened for writing
	if code := exitcode.Code(Run(t.Context(), c), 0); code != exitcode.Usage {
		t.Fatalf("exit status %d for an events file that is a directory, want %d", code, exitcode.Usage)
	}
	c = validConfig(t)
	c.MetricsAddr = "192.0.2.1:1" // not an address of this machine
	if code := exitcode.Code(Run(t.Context(), c), 0); code != exitcode.Failure {
		t.Fatalf("exit status %d when the metrics address cannot be bound, want %d", code, exitcode.Failure)
	}
}

func TestClassification(t *testing.T) {
	tests := []struct {
		name         string
		err          error
		bad, pending bool
	}{
		{"bad database URL", fmt.Errorf("x: %w", storeurl.ErrBadURL), true, false},
		{"bad store option", storeurl.ErrBadOption, true, false},
		{"bad broker URL", broker.ErrBadURL, true, false},
		{"bad broker option", fmt.Errorf("broker: %w", broker.ErrBadOption), true, false},
		{"pg not migrated", fmt.Errorf("store: %w", &pgstore.NotMigratedError{Have: 0, Want: 2}), false, true},
		{"not migrated, in the CLI's words", fmt.Errorf("store: %w", storeurl.NotMigrated("db", &pgstore.NotMigratedError{Want: 2})), false, true},
		{"sqlite not migrated", &sqlitestore.NotMigratedError{}, false, true},
		{"mysql not migrated", &mysqlstore.NotMigratedError{}, false, true},
		{"other", errors.New("connection refused"), false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if badInput(tt.err) != tt.bad || notMigrated(tt.err) != tt.pending {
				t.Fatalf("badInput = %v, notMigrated = %v; want %v, %v", badInput(tt.err), notMigrated(tt.err), tt.bad, tt.pending)
			}
		})
	}
}

func TestBreakersFold(t *testing.T) {
	var got []bool
	b := newBreakers(3, func(open bool) { got = append(got, open) })
	m := func(i int) dispatcherMetrics {
		return dispatcherMetrics{Metrics: outbox.NoopMetrics{}, breakers: b, i: i}
	}
	m(0).BreakerOpen(true)
	m(1).BreakerOpen(true)
	m(0).BreakerOpen(false)
	m(1).BreakerOpen(false)
	m(2).BreakerOpen(false)
	want := []bool{true, true, true, false, false}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("gauge reports %v, want %v", got, want)
	}
}

func TestEventsFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	e, err := openEvents(path)
	if err != nil {
		t.Fatal(err)
	}
	id := reliar.MessageID(uuid.Must(uuid.NewV7()))
	e.Event(outbox.Event{Kind: outbox.EventPublished, Worker: "w", IDs: []reliar.MessageID{id}, Count: 1})
	// Written through at once: readable before Close, as after a SIGKILL.
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := outbox.ReadEvents(f)
	f.Close()
	if err != nil || len(evs) != 1 || evs[0].IDs[0] != id {
		t.Fatalf("events before Close: %+v, %v", evs, err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err == nil {
		t.Fatal("second Close = nil, want the error of closing a closed file")
	}
	if _, err := openEvents(filepath.Join(t.TempDir(), "missing", "events.jsonl")); err == nil {
		t.Fatal("openEvents in a missing directory = nil error")
	}
}

// fakeDispatcher returns a dispatcher that is not running.
func fakeDispatcher(t *testing.T) *outbox.Dispatcher {
	t.Helper()
	d, err := outbox.New(newMemStore(), reliar.PublisherFunc(func(context.Context, *reliar.SerializedEnvelope) error { return nil }), outbox.DefaultSettings(), outbox.WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestReadiness(t *testing.T) {
	tests := []struct {
		name string
		set  func(r *readiness)
		want []string
	}{
		{"starting", func(*readiness) {}, []string{"starting"}},
		{"waiting", func(r *readiness) { r.waiting(errors.New("store: connect to postgres://u:hunter2@h/db: refused")) },
			[]string{"starting: store: connect to postgres://u:xxxxx@h/db: refused"}},
		{"running", func(r *readiness) { r.run(nil) }, nil},
		{"store and broker down", func(r *readiness) {
			r.run(nil)
			r.probed(errors.New("timeout"), errors.New("nats: not connected"))
		}, []string{"store: timeout", "broker: nats: not connected"}},
		{"draining", func(r *readiness) { r.run(nil); r.drain() }, []string{"draining"}},
		{"dispatcher not running", func(r *readiness) { r.run([]*outbox.Dispatcher{fakeDispatcher(t)}) }, []string{"dispatcher 0: not running"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &readiness{}
			tt.set(r)
			got := r.problems()
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Fatalf("problems = %q, want %q", got, tt.want)
			}
			rec := httptest.NewRecorder()
			r.serveReady(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
			wantCode := http.StatusOK
			if len(tt.want) > 0 {
				wantCode = http.StatusServiceUnavailable
			}
			if rec.Code != wantCode || (len(tt.want) > 0 && !strings.Contains(rec.Body.String(), tt.want[0])) {
				t.Fatalf("/readyz = %d %q, want %d", rec.Code, rec.Body.String(), wantCode)
			}
		})
	}
	rec := httptest.NewRecorder()
	serveHealth(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	if rec.Code != http.StatusOK || rec.Body.String() != "ok\n" {
		t.Fatalf("/healthz = %d %q", rec.Code, rec.Body.String())
	}
}

// noPerKey is a store without the per-key ordering capability.
type noPerKey struct{ *memstore.Store }

func (noPerKey) Capabilities() outbox.Capabilities { return outbox.Capabilities{} }

func TestNewWorkers(t *testing.T) {
	pub := &broker.Broker{Publisher: reliar.PublisherFunc(func(context.Context, *reliar.SerializedEnvelope) error { return nil })}
	c := validConfig(t)
	c.Dispatchers = 3
	w, err := newWorkers(c, &deps{store: newMemStore(), broker: pub}, outbox.NoopMetrics{}, nil, quiet)
	if err != nil {
		t.Fatal(err)
	}
	if len(w.dispatchers) != 3 || w.maintainer == nil {
		t.Fatalf("%d dispatchers, maintainer %v; want 3 and one", len(w.dispatchers), w.maintainer != nil)
	}
	for i, d := range w.dispatchers {
		got, want := d.Settings().StatsInterval, time.Duration(-1)
		if i == 0 {
			want = c.Settings.StatsInterval
		}
		if got != want {
			t.Errorf("dispatcher %d: StatsInterval %v, want %v (Stats is polled by one dispatcher)", i, got, want)
		}
	}

	c.Settings.Ordering = outbox.PerKey
	_, err = newWorkers(c, &deps{store: noPerKey{newMemStore()}, broker: pub}, outbox.NoopMetrics{}, nil, quiet)
	if exitcode.Code(err, 0) != exitcode.Usage || !errors.Is(err, outbox.ErrInvalidSettings) {
		t.Fatalf("per-key ordering on a store without it: %v, want bad input", err)
	}
}

// fairStore is a store with the fair-claim capability.
type fairStore struct{ *memstore.Store }

func (fairStore) Capabilities() outbox.Capabilities {
	return outbox.Capabilities{PerKeyOrdering: true, TenantFairness: true}
}

// TestNewWorkersFair: every dispatcher gets the fairness settings; a store
// that cannot claim fairly is bad input, said in the flags' words.
func TestNewWorkersFair(t *testing.T) {
	pub := &broker.Broker{Publisher: reliar.PublisherFunc(func(context.Context, *reliar.SerializedEnvelope) error { return nil })}
	c := validConfig(t)
	c.Dispatchers = 2
	c.Settings.Fairness, c.Settings.MaxInFlightPerTenant = outbox.FairnessTenant, 7
	w, err := newWorkers(c, &deps{store: fairStore{newMemStore()}, broker: pub}, outbox.NoopMetrics{}, nil, quiet)
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range w.dispatchers {
		if s := d.Settings(); s.Fairness != outbox.FairnessTenant || s.MaxInFlightPerTenant != 7 {
			t.Errorf("dispatcher %d: Fairness %v, MaxInFlightPerTenant %d; want tenant, 7", i, s.Fairness, s.MaxInFlightPerTenant)
		}
	}

	for _, url := range []string{"sqlite:///tmp/x.db", "mysql://u@127.0.0.1:3306/db"} {
		loc, err := storeurl.Parse(url)
		if err != nil {
			t.Fatal(err)
		}
		c.Store = loc
		_, err = newWorkers(c, &deps{store: noPerKey{newMemStore()}, broker: pub}, outbox.NoopMetrics{}, nil, quiet)
		if exitcode.Code(err, 0) != exitcode.Usage || !errors.Is(err, ErrCannotClaimFairly) ||
			!strings.Contains(err.Error(), "--fair tenant") || !strings.Contains(err.Error(), "the "+loc.Driver()+" store cannot") {
			t.Fatalf("%s: fair claims on a store without them: %v, want bad input naming --fair and the store", url, err)
		}
	}
}

// newMemStore returns an empty memstore.Store; memstore.New fails only on an
// invalid option.
func newMemStore(opts ...memstore.Option) *memstore.Store {
	s, err := memstore.New(opts...)
	if err != nil {
		panic(err)
	}
	return s
}
