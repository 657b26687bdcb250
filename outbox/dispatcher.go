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

	ran           atomic.Bool
	invalidLogged atomic.Bool // a wrong PublishBatch result count was logged
	health        struct {
		sync.Mutex
		h Health
	}
}

// New returns a dispatcher publishing the rows of store through pub. The
// zero fields of settings take their defaults (Settings.WithDefaults). It
// never panics: invalid settings are reported together, each as a
// *ConfigError (matching ErrInvalidSettings), and invalid options as errors
// matching ErrInvalidOption. Risky but valid settings are logged at warn and
// returned by Warnings.
func New(store Store, pub reliar.Publisher, settings Settings, opts ...Option) (*Dispatcher, error) {
	var errs []error
	if store == nil {
		errs = append(errs, &ConfigError{Field: "store", Reason: "must not be nil"})
	}
	if pub == nil {
		errs = append(errs, &ConfigError{Field: "publisher", Reason: "must not be nil"})
	}
	var caps Capabilities
	if store != nil {
		caps = store.Capabilities()
	}
	settings = settings.WithDefaults()
	errs = append(errs, settings.Validate(caps))
	o, err := applyOptions(forDispatcher, opts)
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	d := &Dispatcher{
		store:    store,
		pub:      pub,
		settings: settings,
		warnings: settings.Warnings(),
		metrics:  o.metrics,
		tracer:   o.tracer,
		log:      o.logger.With("component", "reliar.outbox.dispatcher"),
		wakeups:  !o.noWake,
		events:   o.events,
	}
	d.batchPub, _ = pub.(reliar.BatchPublisher)
	for _, w := range d.warnings {
		d.log.Warn("risky dispatcher settings", "warning", w)
	}
	return d, nil
}

// Settings returns the settings the dispatcher uses, defaults filled in.
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
	// BreakerCause is the error of the latest transient failure while the
	// breaker is open (a broker down, a stream missing, credentials
	// refused); empty when it is closed.
	BreakerCause string
	// StuckCalls counts the publish and store calls that ignored their
	// context past their deadline plus a grace and have not returned yet.
	// The dispatcher stopped waiting for them (their rows were resolved as
	// failures, their late results are ignored), but each still holds a
	// goroutine, and whatever the call holds, until it returns.
	StuckCalls int
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
