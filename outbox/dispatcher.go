package outbox

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/reliar/reliar"
)

// ErrAlreadyRunning is returned by Run on a dispatcher that has run before.
var ErrAlreadyRunning = errors.New("outbox: dispatcher already ran; make a new one")

// Dispatcher claims due rows from a Store, publishes them through a
// Publisher and records each outcome. Make one with New and call Run.
type Dispatcher struct {
	store    Store
	pub      reliar.Publisher
	batchPub reliar.BatchPublisher
	settings Settings
	warnings []string
	metrics  Metrics
	tracer   Tracer
	log      *slog.Logger
	wakeups  bool
	events   EventSink

	ran    atomic.Bool
	health struct {
		sync.Mutex
		h Health
	}
}

// Option configures optional parts of a Dispatcher.
type Option func(*Dispatcher)

// WithMetrics sends measurements to m.
func WithMetrics(m Metrics) Option { return func(d *Dispatcher) { d.metrics = m } }

// WithTracer opens spans with t.
func WithTracer(t Tracer) Option { return func(d *Dispatcher) { d.tracer = t } }

// WithLogger logs to l instead of slog.Default().
func WithLogger(l *slog.Logger) Option { return func(d *Dispatcher) { d.log = l } }

// WithoutWakeups stops the dispatcher from listening to the store's
// wake-ups (for example behind PgBouncer in transaction pooling mode); it
// then finds new rows by polling alone.
func WithoutWakeups() Option { return func(d *Dispatcher) { d.wakeups = false } }

// New validates settings against the store's capabilities and returns a
// dispatcher. It never panics: bad input is a *ConfigError (matching
// ErrInvalidSettings). Risky but valid settings are logged at warn and
// returned by Warnings.
func New(store Store, pub reliar.Publisher, settings Settings, opts ...Option) (*Dispatcher, error) {
	if store == nil {
		return nil, &ConfigError{Field: "store", Reason: "must not be nil"}
	}
	if pub == nil {
		return nil, &ConfigError{Field: "publisher", Reason: "must not be nil"}
	}
	if err := settings.Validate(store.Capabilities()); err != nil {
		return nil, err
	}
	d := &Dispatcher{
		store:    store,
		pub:      pub,
		settings: settings,
		warnings: settings.Warnings(),
		metrics:  NoopMetrics{},
		tracer:   NoopTracer{},
		log:      slog.Default(),
		wakeups:  true,
	}
	d.batchPub, _ = pub.(reliar.BatchPublisher)
	for _, o := range opts {
		if o != nil {
			o(d)
		}
	}
	if d.metrics == nil {
		d.metrics = NoopMetrics{}
	}
	if d.tracer == nil {
		d.tracer = NoopTracer{}
	}
	if d.log == nil {
		d.log = slog.Default()
	}
	d.log = d.log.With("component", "reliar.outbox.dispatcher")
	for _, w := range d.warnings {
		d.log.Warn("risky dispatcher settings", "warning", w)
	}
	return d, nil
}

// Settings returns the dispatcher's settings.
func (d *Dispatcher) Settings() Settings { return d.settings }

// Warnings returns the warnings about the settings that New logged.
func (d *Dispatcher) Warnings() []string { return append([]string(nil), d.warnings...) }

// Health is a snapshot of a dispatcher's state, for users who embed it.
type Health struct {
	// Running is true between the start and the end of Run.
	Running bool
	// WorkerID is the identity of the current or last Run.
	WorkerID string
	// LastClaim is when a claim last succeeded.
	LastClaim time.Time
	// LastOutcomeWrite is when an outcome write last succeeded.
	LastOutcomeWrite time.Time
	// BreakerOpen is true while the circuit breaker holds claims back.
	BreakerOpen bool
}

// Health returns the dispatcher's current health.
func (d *Dispatcher) Health() Health {
	d.health.Lock()
	defer d.health.Unlock()
	return d.health.h
}

func (d *Dispatcher) updateHealth(f func(h *Health)) {
	d.health.Lock()
	f(&d.health.h)
	d.health.Unlock()
}

// Run claims, publishes and records outcomes until ctx is cancelled, then
// drains within DrainTimeout and returns nil. It returns early, after a
// best-effort drain, with the error of a store call that failed permanently
// (for example a missing table). Transient store errors and every publish
// failure are handled inside; they never end Run. A dispatcher runs once:
// a second Run returns ErrAlreadyRunning.
func (d *Dispatcher) Run(ctx context.Context) error {
	if !d.ran.CompareAndSwap(false, true) {
		return ErrAlreadyRunning
	}
	worker := workerID(d.settings.WorkerID)
	d.updateHealth(func(h *Health) { *h = Health{Running: true, WorkerID: worker} })
	defer d.updateHealth(func(h *Health) { h.Running = false })
	l := newLoop(d, worker)
	return l.run(ctx)
}

// workerID appends a random suffix to prefix.
func workerID(prefix string) string {
	if prefix == "" {
		prefix = "reliar"
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	return prefix + "-" + hex.EncodeToString(b[:])
}
