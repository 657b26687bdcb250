package promobs_test

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/observability/promobs"
	"github.com/reliar/reliar/outbox"
	"github.com/reliar/reliar/outbox/memstore"
)

// New registers every family at once; hand the Metrics to the dispatcher
// with outbox.WithMetrics and serve the registry with promhttp.
func ExampleNew() {
	reg := prometheus.NewRegistry()
	m, err := promobs.New(reg, promobs.WithConstLabels(prometheus.Labels{"table": "orders_outbox"}))
	if err != nil {
		panic(err)
	}
	pub := reliar.PublisherFunc(func(context.Context, *reliar.SerializedEnvelope) error { return nil }) // your broker's
	store, err := memstore.New()
	if err != nil {
		panic(err)
	}
	if _, err := outbox.New(store, pub, outbox.DefaultSettings(), outbox.WithMetrics(m)); err != nil {
		panic(err)
	}

	families, err := reg.Gather()
	if err != nil {
		panic(err)
	}
	for _, f := range families {
		fmt.Println(f.GetName())
	}
	// Output:
	// reliar_outbox_abandoned_total
	// reliar_outbox_breaker_open
	// reliar_outbox_calls_given_up_total
	// reliar_outbox_claimed_total
	// reliar_outbox_dead
	// reliar_outbox_dead_total
	// reliar_outbox_due
	// reliar_outbox_expired_pending
	// reliar_outbox_invalid_batch_results_total
	// reliar_outbox_lease_renewal_shortfall_total
	// reliar_outbox_leased
	// reliar_outbox_oldest_due_age_seconds
	// reliar_outbox_outcome_write_failures_total
	// reliar_outbox_pending
	// reliar_outbox_publish_duration_seconds
	// reliar_outbox_publish_failures_total
	// reliar_outbox_published_total
	// reliar_outbox_redelivery_outside_dedup_total
	// reliar_outbox_released_at_drain_total
	// reliar_outbox_retried_total
	// reliar_outbox_scheduled
}

// Past the cap, message types share the "other" series.
func ExampleWithMaxMessageTypes() {
	reg := prometheus.NewRegistry()
	m, err := promobs.New(reg, promobs.WithMaxMessageTypes(1))
	if err != nil {
		panic(err)
	}
	m.Published("orders.placed", 3*time.Millisecond)
	m.Published("orders.cancelled", 2*time.Millisecond)
	m.Published("orders.shipped", 4*time.Millisecond)

	n, _ := testutil.GatherAndCount(reg, "reliar_outbox_published_total")
	fmt.Println("series:", n)
	// Output: series: 2
}
