// Package otelobs connects Reliar to OpenTelemetry: the outbox's metrics,
// claim, publish and outcome spans, and the capture of the trace context at
// enqueue.
//
//	// At start-up, once: enqueue records the active span's W3C trace context
//	// in each message's metadata.
//	otelobs.InstallTraceExtractor(nil)
//
//	m, err := otelobs.NewMetrics(meterProvider.Meter("orders"))
//	if err != nil {
//		return err
//	}
//	defer m.Close()
//	tr, err := otelobs.NewTracer(tracerProvider, otelobs.WithMessagingSystem("nats"))
//	if err != nil {
//		return err
//	}
//	d, err := outbox.New(store, pub, outbox.DefaultSettings(),
//		outbox.WithMetrics(m), outbox.WithTracer(tr))
//
// Both constructors take the same [Option] type. [WithAttributes] applies to
// both; [WithMessagingSystem] only to NewTracer and [WithMaxMessageTypes]
// only to NewMetrics: given to the other constructor, an option makes it fail
// with [ErrInvalidOption].
//
// # Spans
//
// "reliar.outbox.claim" wraps each claim, a child of the dispatcher's
// context, with attributes reliar.worker.id and reliar.claim.requested.
//
// "reliar.outbox.publish" wraps each publish call, span kind producer, with
// attributes messaging.message.id, messaging.message.conversation_id,
// messaging.operation.type ("send"), messaging.destination.name (the
// message's Routing.Destination, when set), messaging.system (see
// [WithMessagingSystem]), reliar.message_type and reliar.attempt. Its parent
// is the trace context captured at enqueue (Metadata.Trace, parsed as W3C
// Trace Context), so the publish shows up in the trace of the request that
// enqueued the message, however much later it happens. When the
// dispatcher's own context carries a span as well, the publish span links to
// it rather than descending from it. A message without a usable trace
// context gets the dispatcher's context as parent, a new root when it has no
// span.
//
// "reliar.outbox.outcome" wraps each store call recording outcomes, a child
// of the dispatcher's context, with attributes messaging.operation.name (the
// write: "complete" or "fail"), messaging.operation.type ("settle"),
// messaging.batch.message_count (the rows written) and messaging.system.
//
// [WithAttributes] adds its attributes to every span.
//
// A span that ends with an error records it (RecordError), takes status
// Error with the sanitized error text, and gets reliar.failure_kind
// ("transient" or "permanent").
//
// # Metrics
//
// Instrument names follow OpenTelemetry's conventions: dot-separated, no
// unit or _total suffix in the name, the unit as instrument metadata. Read
// through the OpenTelemetry Prometheus exporter (dots become underscores,
// counters gain _total, seconds gain _seconds) they come out with the names
// of the Prometheus adapter, except the dead rows gauge:
//
//	OpenTelemetry instrument               kind       unit       attributes                               Prometheus adapter
//	reliar.outbox.claimed                  counter    {message}                                           reliar_outbox_claimed_total
//	reliar.outbox.published                counter    {message}  reliar.message_type                      reliar_outbox_published_total
//	reliar.outbox.publish.failures         counter    {message}  reliar.message_type, reliar.failure_kind reliar_outbox_publish_failures_total
//	reliar.outbox.retried                  counter    {message}  reliar.failure_kind                      reliar_outbox_retried_total
//	reliar.outbox.dead                     counter    {message}  reliar.dead_reason                       reliar_outbox_dead_total
//	reliar.outbox.outcome_write.failures   counter    {call}                                              reliar_outbox_outcome_write_failures_total
//	reliar.outbox.lease_renewal.shortfall  counter    {message}                                           reliar_outbox_lease_renewal_shortfall_total
//	reliar.outbox.abandoned                counter    {message}                                           reliar_outbox_abandoned_total
//	reliar.outbox.released_at_drain        counter    {message}                                           reliar_outbox_released_at_drain_total
//	reliar.outbox.redelivery_outside_dedup counter    {message}                                           reliar_outbox_redelivery_outside_dedup_total
//	reliar.outbox.publish.duration         histogram  s          reliar.message_type                      reliar_outbox_publish_duration_seconds
//	reliar.outbox.pending                  gauge      {message}                                           reliar_outbox_pending
//	reliar.outbox.due                      gauge      {message}                                           reliar_outbox_due
//	reliar.outbox.leased                   gauge      {message}                                           reliar_outbox_leased
//	reliar.outbox.scheduled                gauge      {message}                                           reliar_outbox_scheduled
//	reliar.outbox.dead_rows                gauge      {message}                                           reliar_outbox_dead
//	reliar.outbox.expired_pending          gauge      {message}                                           reliar_outbox_expired_pending
//	reliar.outbox.oldest_due.age           gauge      s                                                   reliar_outbox_oldest_due_age_seconds
//	reliar.outbox.breaker.open             gauge      (none)                                              reliar_outbox_breaker_open
//
// The dead rows gauge cannot share its name with the dead counter: an
// instrument name identifies one instrument. The Prometheus adapter's labels
// message_type, kind and reason are reliar.message_type,
// reliar.failure_kind and reliar.dead_reason here.
//
// The row gauges are observable gauges that report the last outbox.Stats
// the dispatcher delivered; they report nothing before the first one.
// reliar.outbox.breaker.open reports 0 until the breaker first opens.
//
// reliar.message_type is the only open-ended attribute: past
// [WithMaxMessageTypes] distinct types (100 by default) further types are
// recorded as [OtherMessageType].
//
// # The relay
//
// The standalone relay (reliar relay) uses this package when the standard
// OTEL_* variables name an OTLP endpoint (OTEL_EXPORTER_OTLP_ENDPOINT or a
// per-signal one): it exports these spans and metrics over OTLP, gRPC or
// HTTP/protobuf as OTEL_EXPORTER_OTLP_PROTOCOL says, next to its Prometheus
// /metrics, with messaging.system set from its broker URL. Without an
// endpoint variable it exports nothing.
package otelobs
