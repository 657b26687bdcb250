package outbox

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/reliar/reliar/outbox/outboxdriver"
)

// MaintainerSettings configures a Maintainer.
type MaintainerSettings struct {
	// Interval is the time between passes. Defaults to 1m.
	Interval time.Duration
	// PublishedRetention deletes published rows older than it; nil keeps
	// them. Defaults to 24h.
	PublishedRetention *time.Duration
	// DeadRetention deletes dead rows older than it; nil keeps them.
	// Defaults to 14 days.
	DeadRetention *time.Duration
	// BatchSize caps each statement of a purge pass; a pass that hits the
	// cap is followed by another at once. Defaults to 1000.
	BatchSize int
	// StoreTimeout bounds each store call. Defaults to 30s.
	StoreTimeout time.Duration
	// InboxRetention is how long the processed-message records of the
	// inbox given with MaintainInbox are kept. It must exceed the broker's
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

// DefaultMaintainerSettings returns the maintainer's defaults.
func DefaultMaintainerSettings() MaintainerSettings {
	pub, dead := DefaultPublishedRetention, DefaultDeadRetention
	return MaintainerSettings{
		Interval:           time.Minute,
		PublishedRetention: &pub,
		DeadRetention:      &dead,
		BatchSize:          1000,
		StoreTimeout:       30 * time.Second,
		InboxRetention:     DefaultDeadRetention,
	}
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

// NewMaintainer validates settings and returns a maintainer.
func NewMaintainer(store Store, settings MaintainerSettings, opts ...MaintainerOption) (*Maintainer, error) {
	switch {
	case store == nil:
		return nil, &ConfigError{Field: "store", Reason: "must not be nil"}
	case settings.Interval <= 0:
		return nil, &ConfigError{Field: "Interval", Reason: "must be positive"}
	case settings.BatchSize <= 0:
		return nil, &ConfigError{Field: "BatchSize", Reason: "must be positive"}
	case settings.StoreTimeout <= 0:
		return nil, &ConfigError{Field: "StoreTimeout", Reason: "must be positive"}
	case settings.PublishedRetention != nil && *settings.PublishedRetention < 0:
		return nil, &ConfigError{Field: "PublishedRetention", Reason: "must not be negative"}
	case settings.DeadRetention != nil && *settings.DeadRetention < 0:
		return nil, &ConfigError{Field: "DeadRetention", Reason: "must not be negative"}
	}
	m := &Maintainer{store: store, settings: settings, log: slog.Default(), metrics: NoopMetrics{}}
	for _, o := range opts {
		if o != nil {
			o(m)
		}
	}
	if m.inbox != nil && settings.InboxRetention <= 0 {
		return nil, &ConfigError{Field: "InboxRetention", Reason: "must be positive when an inbox is maintained"}
	}
	m.log = m.log.With("component", "reliar.outbox.maintainer")
	return m, nil
}

// MaintainerOption configures optional parts of a Maintainer.
type MaintainerOption func(*Maintainer)

// MaintainInbox makes every pass also delete the inbox's processed-message
// records older than InboxRetention, in batches of BatchSize.
func MaintainInbox(p InboxPurger) MaintainerOption {
	return func(m *Maintainer) { m.inbox = p }
}

// MaintainerLogger logs to l instead of slog.Default().
func MaintainerLogger(l *slog.Logger) MaintainerOption {
	return func(m *Maintainer) {
		if l != nil {
			m.log = l
		}
	}
}

// MaintainerMetrics counts expired rows moved to dead in m.
func MaintainerMetrics(mt Metrics) MaintainerOption {
	return func(m *Maintainer) {
		if mt != nil {
			m.metrics = mt
		}
	}
}

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
	req := outboxdriver.PurgeRequest{PublishedRetention: m.settings.PublishedRetention, DeadRetention: m.settings.DeadRetention, BatchSize: m.settings.BatchSize}
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
