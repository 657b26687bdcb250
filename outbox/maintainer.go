package outbox

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/reliar/reliar/outbox/outboxdriver"
)

// MaintainerSettings configures a Maintainer. As in Settings, the zero
// value of every field means its default; KeepForever keeps rows for ever.
type MaintainerSettings struct {
	// Interval is the time between passes. Defaults to 1m.
	Interval time.Duration
	// PublishedRetention deletes published rows older than it; KeepForever
	// keeps them. Defaults to 24h (DefaultPublishedRetention).
	PublishedRetention time.Duration
	// DeadRetention deletes dead rows older than it; KeepForever keeps
	// them. Defaults to 14 days (DefaultDeadRetention).
	DeadRetention time.Duration
	// BatchSize caps each statement of a purge pass; a pass that hits the
	// cap is followed by another at once. Defaults to 1000.
	BatchSize int
	// StoreTimeout bounds each store call. Defaults to 30s.
	StoreTimeout time.Duration
	// InboxRetention is how long the processed-message records of the
	// inbox given with WithInbox are kept. It must exceed the broker's
	// redelivery horizon. Defaults to 14 days.
	InboxRetention time.Duration
}

// InboxPurger deletes old processed-message records; every store's inbox
// implements it (inbox.Marker's PurgeProcessed).
type InboxPurger interface {
	PurgeProcessed(ctx context.Context, retention time.Duration, limit int) (int64, error)
}

// Default retention of published and dead rows, shared by the Maintainer
// and the purge command.
const (
	DefaultPublishedRetention = 24 * time.Hour
	DefaultDeadRetention      = 14 * 24 * time.Hour
)

// DefaultMaintainerSettings returns the maintainer's defaults, every field
// filled: the same as MaintainerSettings{}.WithDefaults().
func DefaultMaintainerSettings() MaintainerSettings { return MaintainerSettings{}.WithDefaults() }

// WithDefaults returns a copy of s with every zero field set to its default.
func (s MaintainerSettings) WithDefaults() MaintainerSettings {
	if s.Interval == 0 {
		s.Interval = time.Minute
	}
	if s.PublishedRetention == 0 {
		s.PublishedRetention = DefaultPublishedRetention
	}
	if s.DeadRetention == 0 {
		s.DeadRetention = DefaultDeadRetention
	}
	if s.BatchSize == 0 {
		s.BatchSize = 1000
	}
	if s.StoreTimeout == 0 {
		s.StoreTimeout = 30 * time.Second
	}
	if s.InboxRetention == 0 {
		s.InboxRetention = DefaultDeadRetention
	}
	return s
}

// Validate checks the settings NewMaintainer would use (s.WithDefaults())
// and returns every problem as a *ConfigError, joined, or nil.
func (s MaintainerSettings) Validate() error {
	s = s.WithDefaults()
	var p problems
	for _, f := range []struct {
		name string
		v    time.Duration
	}{{"Interval", s.Interval}, {"StoreTimeout", s.StoreTimeout}, {"InboxRetention", s.InboxRetention}} {
		if f.v < 0 {
			p.add(f.name, "(%v) must be positive (zero means the default)", f.v)
		}
	}
	if s.BatchSize < 0 {
		p.add("BatchSize", "(%d) must be positive (zero means the default)", s.BatchSize)
	}
	for _, f := range []struct {
		name string
		v    time.Duration
	}{{"PublishedRetention", s.PublishedRetention}, {"DeadRetention", s.DeadRetention}} {
		if f.v < 0 && f.v != KeepForever {
			p.add(f.name, "(%v) must be positive, or KeepForever (zero means the default)", f.v)
		}
	}
	return p.err()
}

// purgeRequest is the store request of one pass: nil retention skips.
func (s MaintainerSettings) purgeRequest() outboxdriver.PurgeRequest {
	keep := func(d time.Duration) *time.Duration {
		if d == KeepForever {
			return nil
		}
		return &d
	}
	return outboxdriver.PurgeRequest{PublishedRetention: keep(s.PublishedRetention), DeadRetention: keep(s.DeadRetention), BatchSize: s.BatchSize}
}

// Maintainer purges old published and dead rows and moves expired pending
// rows to dead, on an interval, so that a table never grows without bound.
// When the store is a MaintenanceLocker, only one maintainer per table works
// at a time; the others wait for their next interval.
type Maintainer struct {
	store    Store
	settings MaintainerSettings
	log      *slog.Logger
	metrics  Metrics
	inbox    InboxPurger
}

// NewMaintainer returns a maintainer of store. The zero fields of settings
// take their defaults; invalid settings are reported together as
// *ConfigErrors, invalid options as errors matching ErrInvalidOption. It
// takes the options WithLogger, WithMetrics and WithInbox.
func NewMaintainer(store Store, settings MaintainerSettings, opts ...Option) (*Maintainer, error) {
	var errs []error
	if store == nil {
		errs = append(errs, &ConfigError{Field: "store", Reason: "must not be nil"})
	}
	settings = settings.WithDefaults()
	errs = append(errs, settings.Validate())
	o, err := applyOptions(forMaintainer, opts)
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return &Maintainer{
		store:    store,
		settings: settings,
		log:      o.logger.With("component", "reliar.outbox.maintainer"),
		metrics:  o.metrics,
		inbox:    o.inbox,
	}, nil
}

// Settings returns the settings the maintainer uses, defaults filled in.
func (m *Maintainer) Settings() MaintainerSettings { return m.settings }

// Run runs a pass at once and then every Interval until ctx is done; it
// returns nil then. Store errors are logged and retried at the next
// interval, except a permanent one, which Run returns.
func (m *Maintainer) Run(ctx context.Context) error {
	t := time.NewTicker(m.settings.Interval)
	defer t.Stop()
	for {
		if _, err := m.RunOnce(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if isPermanent(err) {
				return err
			}
			if errors.Is(err, ErrMaintenanceLocked) {
				m.log.Debug("another maintainer holds the lock; trying at the next interval")
			} else {
				m.log.Warn("maintenance pass failed; retrying at the next interval", "error", err)
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// ErrMaintenanceLocked is returned by RunOnce when another maintainer holds
// the table's maintenance lock.
var ErrMaintenanceLocked = errors.New("outbox: another maintainer holds the maintenance lock")

// RunOnce runs purge passes until one deletes or expires less than a full
// batch, and returns what they did together. It returns
// ErrMaintenanceLocked, doing nothing, while another maintainer works.
func (m *Maintainer) RunOnce(ctx context.Context) (PurgeReport, error) {
	var total PurgeReport
	if locker, ok := m.store.(outboxdriver.MaintenanceLocker); ok && m.store.Capabilities().MaintenanceLock {
		lctx, cancel := context.WithTimeout(ctx, m.settings.StoreTimeout)
		unlock, ok, err := locker.TryLockMaintenance(lctx)
		cancel()
		if err != nil {
			return total, err
		}
		if !ok {
			m.log.Debug("another maintainer holds the lock")
			return total, ErrMaintenanceLocked
		}
		defer unlock()
	}
	req := m.settings.purgeRequest()
	for {
		pctx, cancel := context.WithTimeout(ctx, m.settings.StoreTimeout)
		r, err := m.store.Purge(pctx, req)
		cancel()
		total.PublishedDeleted += r.PublishedDeleted
		total.DeadDeleted += r.DeadDeleted
		total.Expired += r.Expired
		if r.Expired > 0 {
			m.metrics.Dead(DeadExpired, int(r.Expired))
		}
		if err != nil {
			return total, err
		}
		full := int64(req.BatchSize)
		if r.PublishedDeleted < full && r.DeadDeleted < full && r.Expired < full {
			break
		}
		if ctx.Err() != nil {
			return total, ctx.Err()
		}
	}
	if m.inbox != nil {
		for {
			pctx, cancel := context.WithTimeout(ctx, m.settings.StoreTimeout)
			n, err := m.inbox.PurgeProcessed(pctx, m.settings.InboxRetention, m.settings.BatchSize)
			cancel()
			total.ProcessedDeleted += n
			if err != nil {
				return total, err
			}
			if n < int64(m.settings.BatchSize) || ctx.Err() != nil {
				break
			}
		}
	}
	if total != (PurgeReport{}) {
		m.log.Info("maintenance pass", "published_deleted", total.PublishedDeleted, "dead_deleted", total.DeadDeleted, "expired", total.Expired, "processed_deleted", total.ProcessedDeleted)
	}
	return total, nil
}
