// Package promobs exports the outbox dispatcher's and maintainer's
// measurements to Prometheus. [New] registers every metric family with a
// Registerer at once, so a scrape shows them all from the start, and returns
// a [Metrics] to hand to the dispatcher:
//
//	reg := prometheus.NewRegistry()
//	m, err := promobs.New(reg, promobs.WithConstLabels(prometheus.Labels{"table": "orders_outbox"}))
//	if err != nil {
//		return err
//	}
//	d, err := outbox.New(store, pub, outbox.DefaultSettings(), outbox.WithMetrics(m))
//
// The families, all prefixed reliar_outbox_:
//
//	claimed_total                              counter    rows returned by claims
//	published_total{message_type}              counter    messages published
//	publish_failures_total{message_type,kind}  counter    failed publish calls
//	retried_total{kind}                        counter    failures scheduled for another attempt
//	dead_total{reason}                         counter    rows moved to dead
//	outcome_write_failures_total               counter    failed outcome writes
//	lease_renewal_shortfall_total              counter    rows a lease renewal did not extend
//	abandoned_total                            counter    rows left to their lease
//	released_at_drain_total                    counter    rows released at shutdown
//	redelivery_outside_dedup_total             counter    redeliveries outside the broker's dedup window
//	publish_duration_seconds{message_type}     histogram  duration of every publish call, failed ones too
//	pending, due, leased, scheduled, dead,     gauges     rows by state, from the last outbox.Stats
//	  expired_pending
//	oldest_due_age_seconds                     gauge      age of the oldest due row
//	breaker_open                               gauge      1 while the circuit breaker is open
//	tenant_due{tenant_id}                      gauge      due rows of the tenants listed, from Tenants
//	tenant_oldest_due_age_seconds{tenant_id}   gauge      age of each listed tenant's oldest due row
//
// The table-wide gauges (pending to oldest_due_age_seconds, and the tenant
// gauges) describe the table, not the process: several relays over one
// table report the same values, to be combined with max, not sum. The
// tenant gauges exist only for the tenants the last [Metrics.Tenants] call
// listed (the reliar relay lists the ten whose due rows waited longest).
//
// The kind label is "transient" or "permanent"; reason is a dead reason
// ("permanent", "max_attempts", "max_claims", "expired", "undecodable").
// Their children are created at construction with a zero value.
//
// message_type is the only open-ended label. After [WithMaxMessageTypes]
// distinct types (100 by default) further types are counted under
// [OtherMessageType]; that child exists from the start, so a non-zero
// "other" series says the cap was reached. Types named with
// [WithMessageTypes] are declared at construction and always keep their own
// series.
package promobs
