package demo

import (
	"sync/atomic"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox"
)

// counters counts what the dispatcher did, through its Metrics hook.
type counters struct {
	outbox.NoopMetrics
	published atomic.Int64
	failed    atomic.Int64
	dead      atomic.Int64
}

var _ outbox.Metrics = (*counters)(nil)

// Published counts one message published.
func (c *counters) Published(string, time.Duration) { c.published.Add(1) }

// PublishFailed counts one failed publish.
func (c *counters) PublishFailed(string, reliar.FailureKind, time.Duration) { c.failed.Add(1) }

// Dead counts rows moved to dead.
func (c *counters) Dead(_ outbox.DeadReason, n int) { c.dead.Add(int64(n)) }
