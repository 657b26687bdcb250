package deploy_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	dto "github.com/prometheus/client_model/go"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/observability/promobs"
	"github.com/reliar/reliar/outbox"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

// exportedNames returns the names of every series the relay's /metrics
// serves: the reliar_outbox_* families of promobs, each fed once so that
// the families with labels show, and the Go and process collectors the
// relay registers beside them (cmd/reliar/internal/relay: Run). A
// histogram's series are its _bucket, _sum and _count.
func exportedNames(t *testing.T) map[string]bool {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m, err := promobs.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	feed(m)
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	names := make(map[string]bool)
	for _, f := range fams {
		n := f.GetName()
		switch f.GetType() {
		case dto.MetricType_HISTOGRAM, dto.MetricType_GAUGE_HISTOGRAM:
			names[n+"_bucket"], names[n+"_sum"], names[n+"_count"] = true, true, true
		case dto.MetricType_SUMMARY:
			names[n], names[n+"_sum"], names[n+"_count"] = true, true, true
		default:
			names[n] = true
		}
	}
	return names
}

// feed calls every method of outbox.Metrics and the per-tenant gauges
// once, so that every family has a series.
func feed(m *promobs.Metrics) {
	var all outbox.Metrics = m
	all.Claimed(1)
	all.Published("t", time.Millisecond)
	all.PublishFailed("t", reliar.FailureTransient, time.Millisecond)
	all.Retried(reliar.FailureTransient)
	all.Dead(outbox.DeadMaxAttempts, 1)
	all.OutcomeWriteFailed(1)
	all.LeaseShortfall(1)
	all.Abandoned(1)
	all.ReleasedAtDrain(1)
	all.BreakerOpen(true)
	all.RedeliveryOutsideDedup(1)
	all.Stats(outbox.Stats{Pending: 1, Due: 1, OldestDueAge: time.Second})
	all.CallGivenUp("publish")
	all.InvalidBatchResults(1)
	m.Tenants([]outboxdriver.TenantStat{{TenantID: "t", Due: 1, OldestDueAge: time.Second}})
}

// TestExportedNamesCoverPromobs guards exportedNames itself: the families
// the dashboard depends on most are found, so that a feed that stopped
// working would not let every check below pass vacuously.
func TestExportedNamesCoverPromobs(t *testing.T) {
	names := exportedNames(t)
	for _, want := range []string{
		"reliar_outbox_oldest_due_age_seconds", "reliar_outbox_tenant_due", "reliar_outbox_tenant_oldest_due_age_seconds",
		"reliar_outbox_publish_duration_seconds_bucket", "reliar_outbox_breaker_open", "reliar_outbox_dead_total",
		"process_resident_memory_bytes",
	} {
		if !names[want] {
			t.Errorf("%s is not among the exported names", want)
		}
	}
	var ours []string
	for n := range names {
		if strings.HasPrefix(n, "reliar_") {
			ours = append(ours, n)
		}
	}
	if len(ours) < 25 {
		t.Errorf("only %d reliar_* names exported: %v", len(ours), slices.Sorted(slices.Values(ours)))
	}
}
