package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/observability/otelobs"
	"github.com/reliar/reliar/store/pgstore"
)

// orderPlaced is the message the OTLP tests enqueue.
type orderPlaced struct {
	OrderID int `json:"order_id"`
}

func (orderPlaced) MessageType() string { return "orders.placed" }

// The span names the relay exports.
var relaySpanNames = []string{otelobs.ClaimSpanName, otelobs.PublishSpanName, otelobs.OutcomeSpanName}

// enqueued is what the OTLP tests enqueued: message ids and the trace
// context each was enqueued under.
type enqueued map[string]trace.SpanContext

// enqueueTraced enqueues n messages through pgstore inside an application
// span, whose trace context enqueue captures through the OpenTelemetry
// adapter's extractor, and one row by plain SQL carrying a traceparent of
// its own, as a producer in another language writes it.
func enqueueTraced(t *testing.T, db *pgEnv, n int) enqueued {
	t.Helper()
	ctx := t.Context()
	// Process-wide, and harmless to the other tests: a context without a
	// span gives an empty trace.
	otelobs.InstallTraceExtractor(nil)
	store, err := pgstore.New(ctx, db.pool, pgstore.WithSchema(db.schema))
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider()
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	spanCtx, span := tp.Tracer("shop").Start(ctx, "POST /orders")
	msgs := make([]reliar.Outgoing, n)
	for i := range msgs {
		msgs[i] = reliar.NewMsg(orderPlaced{OrderID: i})
	}
	var ids []reliar.MessageID
	err = pgx.BeginFunc(spanCtx, db.pool, func(tx pgx.Tx) error {
		ids, err = store.Enqueue(spanCtx, tx, msgs...)
		return err
	})
	span.End()
	if err != nil {
		t.Fatalf("enqueue: %v", err)
	}
	out := enqueued{}
	for _, id := range ids {
		out[id.String()] = span.SpanContext()
	}

	var tid trace.TraceID
	var sid trace.SpanID
	_, _ = rand.Read(tid[:])
	_, _ = rand.Read(sid[:])
	var id string
	if err := db.pool.QueryRow(ctx, `INSERT INTO `+db.table()+` (id, message_type, payload, metadata)
		VALUES (gen_random_uuid(), 'orders.shipped', '\x7b7d', jsonb_build_object('trace', jsonb_build_object('traceparent', $1::text)))
		RETURNING id::text`, fmt.Sprintf("00-%s-%s-01", tid, sid)).Scan(&id); err != nil {
		t.Fatalf("insert: %v", err)
	}
	out[id] = trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled, Remote: true})
	return out
}

// otelEnv is the environment of a relay exporting to a test receiver: the
// variables of the case, short export intervals, a service name, resource
// attributes and a header.
func otelEnv(vars ...string) []string {
	return append([]string{
		"OTEL_METRIC_EXPORT_INTERVAL=200",
		"OTEL_BSP_SCHEDULE_DELAY=100",
		"OTEL_SERVICE_NAME=orders-relay",
		"OTEL_RESOURCE_ATTRIBUTES=deployment.environment.name=test,team=payments%20core",
		"OTEL_EXPORTER_OTLP_HEADERS=authorization=Bearer%20t0ken",
	}, vars...)
}

// TestRelayExportsOTLP runs the relay binary against PostgreSQL and
// JetStream with the OTEL_* variables pointing at an OTLP receiver of the
// test, over each protocol: the receiver gets the claim, publish and outcome
// spans, each publish span a child of the trace context captured at
// enqueue, and the metrics, the published count equal to the messages sent;
// /metrics keeps counting too.
func TestRelayExportsOTLP(t *testing.T) {
	t.Parallel()
	const messages = 20
	tests := []struct {
		name string
		tls  bool
		env  func(r *otlpReceiver) []string
		// traces and metrics are the receiver's endpoints that must get
		// each signal.
		traces, metrics string
	}{
		{"grpc", false, func(r *otlpReceiver) []string {
			return []string{"OTEL_EXPORTER_OTLP_PROTOCOL=grpc", "OTEL_EXPORTER_OTLP_ENDPOINT=http://" + r.grpcAddr}
		}, "grpc traces", "grpc metrics"},
		{"http/protobuf", false, func(r *otlpReceiver) []string {
			return []string{"OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf", "OTEL_EXPORTER_OTLP_ENDPOINT=" + r.httpURL}
		}, "http traces", "http metrics"},
		// Per-signal variables win over the general ones; a per-signal
		// HTTP endpoint is used as it is, and the protocol defaults to
		// http/protobuf.
		{"per signal", false, func(r *otlpReceiver) []string {
			return []string{
				"OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:1",
				"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=grpc", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=http://" + r.grpcAddr,
				"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT=" + r.httpURL + "/v1/metrics",
			}
		}, "grpc traces", "http metrics"},
		// An https endpoint is TLS, trusting the CA of
		// OTEL_EXPORTER_OTLP_CERTIFICATE.
		{"tls", true, func(r *otlpReceiver) []string {
			return []string{
				"OTEL_EXPORTER_OTLP_CERTIFICATE=" + r.caFile,
				"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=grpc", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=https://" + r.grpcAddr,
				"OTEL_EXPORTER_OTLP_METRICS_PROTOCOL=http/protobuf", "OTEL_EXPORTER_OTLP_ENDPOINT=" + r.httpURL,
			}
		}, "grpc traces", "http metrics"},
	}
	for _, tt := range tests {
		t.Run(strings.ReplaceAll(tt.name, "/", "_"), func(t *testing.T) {
			rcv := startReceiver(t, tt.tls, []string{"authorization"})
			db, js := newPG(t), newJetStream(t)
			db.migrate(t)
			sent := enqueueTraced(t, db, messages)
			p := startRelayEnv(t, otelEnv(tt.env(rcv)...), relayArgs(db, js)...)
			waitFor(t, "every message in the stream", func() bool { return js.messages(t) == len(sent) })
			waitFor(t, "a publish span per message", func() bool { return len(rcv.spansNamed(otelobs.PublishSpanName)) >= len(sent) })
			waitFor(t, "the published count", func() bool { n, _ := rcv.sum("reliar.outbox.published"); return n == int64(len(sent)) })
			waitFor(t, "an outcome span", func() bool { return len(rcv.spansNamed(otelobs.OutcomeSpanName)) > 0 })

			checkPublishSpans(t, rcv, sent, "nats")
			checkRelaySpans(t, rcv)
			names := rcv.metricNames()
			for _, name := range []string{"reliar.outbox.claimed", "reliar.outbox.published", "reliar.outbox.publish.duration", "reliar.outbox.breaker.open"} {
				if !names[name] {
					t.Errorf("metric %s not received; got %v", name, names)
				}
			}
			if n, _ := rcv.sum("reliar.outbox.claimed"); n != int64(len(sent)) {
				t.Errorf("reliar.outbox.claimed = %d, want %d", n, len(sent))
			}
			waitFor(t, "the row gauges", func() bool { return rcv.metricNames()["reliar.outbox.pending"] })
			if got := p.metric(t, `reliar_outbox_published_total{message_type="orders.placed"}`); got != messages {
				t.Errorf("/metrics published_total = %v, want %d: Prometheus must keep counting", got, messages)
			}

			_, resource, headers, requests := rcv.received()
			if resource["service.name"] != "orders-relay" || resource["team"] != "payments core" || resource["deployment.environment.name"] != "test" {
				t.Errorf("resource %v, want OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES", resource)
			}
			if headers["authorization"] != "Bearer t0ken" {
				t.Errorf("authorization header %q, want OTEL_EXPORTER_OTLP_HEADERS' value", headers["authorization"])
			}
			for what, n := range requests {
				if what != tt.traces && what != tt.metrics {
					t.Errorf("%d requests to %s, want traces to %s and metrics to %s only", n, what, tt.traces, tt.metrics)
				}
			}

			code, took := p.stop(t, syscall.SIGTERM)
			if code != 0 {
				t.Fatalf("exit %d after SIGTERM, want 0\n%s", code, p.stderr.String())
			}
			if took > 5*time.Second+3*time.Second {
				t.Errorf("the relay took %v to exit; the drain timeout is 5s", took)
			}
			if n := otelWarnings(p.stderr.String()); len(n) != 0 {
				t.Errorf("OpenTelemetry warnings with a working collector: %q", n)
			}
		})
	}
}

// checkPublishSpans checks that every message sent has one publish span,
// a producer span in the trace it was enqueued under, whose parent is the
// enqueuing span.
func checkPublishSpans(t *testing.T, rcv *otlpReceiver, sent enqueued, system string) {
	t.Helper()
	seen := map[string]bool{}
	for _, s := range rcv.spansNamed(otelobs.PublishSpanName) {
		a := spanAttrs(s.Span)
		id := a["messaging.message.id"]
		want, ok := sent[id]
		if !ok {
			t.Errorf("publish span for a message not sent: %v", a)
			continue
		}
		seen[id] = true
		if got := hex.EncodeToString(s.GetTraceId()); got != want.TraceID().String() {
			t.Errorf("message %s: publish span trace %s, want the enqueued %s", id, got, want.TraceID())
		}
		if got := hex.EncodeToString(s.GetParentSpanId()); got != want.SpanID().String() {
			t.Errorf("message %s: publish span parent %s, want the enqueuing span %s", id, got, want.SpanID())
		}
		if s.GetKind() != tracepb.Span_SPAN_KIND_PRODUCER || a["messaging.system"] != system || a["messaging.operation.type"] != "send" {
			t.Errorf("message %s: publish span kind %v, attributes %v; want producer, %s, send", id, s.GetKind(), a, system)
		}
		if s.scope != otelobs.ScopeName {
			t.Errorf("publish span scope %q, want %q", s.scope, otelobs.ScopeName)
		}
	}
	if len(seen) != len(sent) {
		t.Errorf("publish spans for %d of the %d messages sent", len(seen), len(sent))
	}
}

// checkRelaySpans checks the claim and outcome spans: the claims returned
// rows, and every outcome write recorded completions.
func checkRelaySpans(t *testing.T, rcv *otlpReceiver) {
	t.Helper()
	claims := rcv.spansNamed(otelobs.ClaimSpanName)
	if len(claims) == 0 {
		t.Fatal("no claim span")
	}
	for _, s := range claims {
		if a := spanAttrs(s.Span); a["reliar.worker.id"] == "" {
			t.Errorf("claim span without reliar.worker.id: %v", a)
		}
	}
	for _, s := range rcv.spansNamed(otelobs.OutcomeSpanName) {
		a := spanAttrs(s.Span)
		if a["messaging.operation.name"] != "complete" || a["messaging.operation.type"] != "settle" || a["messaging.system"] != "nats" {
			t.Errorf("outcome span attributes %v, want complete, settle, nats", a)
		}
		if s.GetStatus().GetCode() == tracepb.Status_STATUS_CODE_ERROR {
			t.Errorf("outcome span failed: %v", s.GetStatus())
		}
	}
}

// spanAttrs returns a span's attributes as text.
func spanAttrs(s *tracepb.Span) map[string]string {
	out := map[string]string{}
	for _, kv := range s.GetAttributes() {
		v := kv.GetValue()
		switch {
		case v.GetStringValue() != "":
			out[kv.GetKey()] = v.GetStringValue()
		default:
			out[kv.GetKey()] = fmt.Sprint(v.GetIntValue())
		}
	}
	return out
}

// TestRelayFlushesOTLPAtShutdown: with export intervals far longer than the
// run, nothing reaches the collector until SIGTERM, and the flush at
// shutdown delivers every span and the final counts.
func TestRelayFlushesOTLPAtShutdown(t *testing.T) {
	t.Parallel()
	rcv := startOTLPReceiver(t)
	db, js := newPG(t), newJetStream(t)
	db.migrate(t)
	sent := enqueueTraced(t, db, 10)
	p := startRelayEnv(t, []string{
		"OTEL_EXPORTER_OTLP_ENDPOINT=" + rcv.httpURL,
		"OTEL_METRIC_EXPORT_INTERVAL=600000", "OTEL_BSP_SCHEDULE_DELAY=600000",
	}, relayArgs(db, js)...)
	waitFor(t, "every message in the stream", func() bool { return js.messages(t) == len(sent) })
	waitFor(t, "every row published", func() bool { return db.count(t, "published_at IS NOT NULL") == len(sent) })
	if _, _, _, requests := rcv.received(); len(requests) != 0 {
		t.Fatalf("requests %v before shutdown, with 10-minute intervals", requests)
	}
	if code, _ := p.stop(t, syscall.SIGTERM); code != 0 {
		t.Fatalf("exit %d after SIGTERM, want 0\n%s", code, p.stderr.String())
	}
	checkPublishSpans(t, rcv, sent, "nats")
	if n, _ := rcv.sum("reliar.outbox.published"); n != int64(len(sent)) {
		t.Errorf("reliar.outbox.published = %d after the flush, want %d", n, len(sent))
	}
}

// TestRelayOTLPSignalOff: OTEL_TRACES_EXPORTER=none exports metrics alone,
// and OTEL_SDK_DISABLED=true nothing at all, although an endpoint is set.
func TestRelayOTLPSignalOff(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		env         string
		wantMetrics bool
	}{
		{"traces exporter none", "OTEL_TRACES_EXPORTER=none", true},
		{"sdk disabled", "OTEL_SDK_DISABLED=true", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rcv := startOTLPReceiver(t)
			db, js := newPG(t), newJetStream(t)
			db.migrate(t)
			db.insert(t, "order_placed", 5)
			p := startRelayEnv(t, otelEnv("OTEL_EXPORTER_OTLP_ENDPOINT="+rcv.httpURL, tt.env), relayArgs(db, js)...)
			waitFor(t, "5 messages in the stream", func() bool { return js.messages(t) == 5 })
			if tt.wantMetrics {
				waitFor(t, "the published count", func() bool { n, _ := rcv.sum("reliar.outbox.published"); return n == 5 })
			}
			if code, _ := p.stop(t, syscall.SIGTERM); code != 0 {
				t.Fatalf("exit %d, want 0\n%s", code, p.stderr.String())
			}
			_, _, _, requests := rcv.received()
			if requests["http traces"] != 0 {
				t.Errorf("%d trace requests, want none", requests["http traces"])
			}
			if !tt.wantMetrics && len(requests) != 0 {
				t.Errorf("requests %v with the SDK disabled", requests)
			}
		})
	}
}

// TestRelayWithoutOTLPEndpoint: with OTEL_* variables but no endpoint the
// relay exports nothing (it does not try localhost:4317), and says nothing
// about OpenTelemetry.
func TestRelayWithoutOTLPEndpoint(t *testing.T) {
	t.Parallel()
	db, js := newPG(t), newJetStream(t)
	db.migrate(t)
	db.insert(t, "order_placed", 3)
	p := startRelayEnv(t, otelEnv("OTEL_EXPORTER_OTLP_PROTOCOL=grpc"), relayArgs(db, js)...)
	p.waitReady(t, http.StatusOK)
	waitFor(t, "3 messages in the stream", func() bool { return js.messages(t) == 3 })
	if code, _ := p.stop(t, syscall.SIGTERM); code != 0 {
		t.Fatalf("exit %d, want 0\n%s", code, p.stderr.String())
	}
	if strings.Contains(p.stderr.String(), "OpenTelemetry") {
		t.Errorf("the relay mentions OpenTelemetry without an endpoint:\n%s", p.stderr.String())
	}
}

// TestRelayUnreachableCollector: a collector that does not answer neither
// fails nor slows the relay: every message is published, /metrics counts,
// one warning is logged, and SIGTERM exits 0 within the drain timeout.
func TestRelayUnreachableCollector(t *testing.T) {
	t.Parallel()
	for _, protocol := range []string{"grpc", "http/protobuf"} {
		t.Run(strings.ReplaceAll(protocol, "/", "_"), func(t *testing.T) {
			t.Parallel()
			db, js := newPG(t), newJetStream(t)
			db.migrate(t)
			db.insert(t, "order_placed", 30)
			p := startRelayEnv(t, otelEnv("OTEL_EXPORTER_OTLP_PROTOCOL="+protocol, "OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:1",
				"OTEL_EXPORTER_OTLP_TIMEOUT=300"), relayArgs(db, js)...)
			waitFor(t, "30 messages in the stream", func() bool { return js.messages(t) == 30 })
			waitFor(t, "the published counter", func() bool {
				return p.metric(t, `reliar_outbox_published_total{message_type="order_placed"}`) == 30
			})
			waitFor(t, "the warning", func() bool { return strings.Contains(p.stderr.String(), "OpenTelemetry export failing") })
			// Let a few more exports fail.
			time.Sleep(time.Second)
			code, took := p.stop(t, syscall.SIGTERM)
			if code != 0 {
				t.Fatalf("exit %d after SIGTERM, want 0\n%s", code, p.stderr.String())
			}
			if took > 5*time.Second+3*time.Second {
				t.Errorf("the relay took %v to exit; the drain timeout is 5s", took)
			}
			warnings := otelWarnings(p.stderr.String())
			if len(warnings) != 1 || !strings.Contains(warnings[0], "OpenTelemetry export failing") || !strings.Contains(warnings[0], "127.0.0.1:1") {
				t.Errorf("OpenTelemetry warnings %q, want one about the export failing, naming the collector", warnings)
			}
			if strings.Contains(p.stderr.String(), "level=ERROR") {
				t.Errorf("errors logged:\n%s", p.stderr.String())
			}
		})
	}
}

// otelWarnings returns the relay's warnings about OpenTelemetry; other
// warnings (another test's outbox table in the same database) do not
// count.
func otelWarnings(stderr string) []string {
	var out []string
	for line := range strings.SplitSeq(stderr, "\n") {
		if strings.Contains(line, "level=WARN") && strings.Contains(line, "OpenTelemetry") {
			out = append(out, line)
		}
	}
	return out
}

// TestRelayBadOTelVariables: a value the relay cannot use is bad input:
// exit status 2 before connecting to anything, with one line naming the
// variable. The database does not answer: a relay that connected first
// would wait for it instead of exiting.
func TestRelayBadOTelVariables(t *testing.T) {
	t.Parallel()
	endpoint := "OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318"
	tests := []struct {
		name string
		env  []string
		want string
	}{
		{"unknown protocol", []string{endpoint, "OTEL_EXPORTER_OTLP_PROTOCOL=grpcc"}, "OTEL_EXPORTER_OTLP_PROTOCOL"},
		{"http/json", []string{endpoint, "OTEL_EXPORTER_OTLP_PROTOCOL=http/json"}, "OTEL_EXPORTER_OTLP_PROTOCOL"},
		{"per-signal protocol", []string{endpoint, "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL=thrift"}, "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL"},
		{"endpoint without scheme", []string{"OTEL_EXPORTER_OTLP_ENDPOINT=collector:4317"}, "OTEL_EXPORTER_OTLP_ENDPOINT"},
		{"endpoint without host", []string{"OTEL_EXPORTER_OTLP_ENDPOINT=http://"}, "OTEL_EXPORTER_OTLP_ENDPOINT"},
		{"malformed endpoint", []string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=http://[::1"}, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"},
		{"endpoint port", []string{"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT=https://collector:99999"}, "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"},
		{"interval in seconds", []string{endpoint, "OTEL_METRIC_EXPORT_INTERVAL=5s"}, "OTEL_METRIC_EXPORT_INTERVAL"},
		{"negative delay", []string{endpoint, "OTEL_BSP_SCHEDULE_DELAY=-1"}, "OTEL_BSP_SCHEDULE_DELAY"},
		{"sampler", []string{endpoint, "OTEL_TRACES_SAMPLER=sometimes"}, "OTEL_TRACES_SAMPLER"},
		{"exporter", []string{endpoint, "OTEL_TRACES_EXPORTER=zipkin"}, "OTEL_TRACES_EXPORTER"},
		{"headers", []string{endpoint, "OTEL_EXPORTER_OTLP_HEADERS=api-key"}, "OTEL_EXPORTER_OTLP_HEADERS"},
		{"insecure", []string{endpoint, "OTEL_EXPORTER_OTLP_INSECURE=yes"}, "OTEL_EXPORTER_OTLP_INSECURE"},
		{"resource attributes", []string{endpoint, "OTEL_RESOURCE_ATTRIBUTES=team"}, "OTEL_RESOURCE_ATTRIBUTES"},
		{"sdk disabled", []string{endpoint, "OTEL_SDK_DISABLED=maybe"}, "OTEL_SDK_DISABLED"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(t.Context(), relayWait)
			defer cancel()
			r := command(t, ctx, t.TempDir(), t.TempDir(), tt.env, binary, "relay", "--metrics-addr", "127.0.0.1:0",
				"--database-url", "postgres://u:hunter2@127.0.0.1:1/x", "--broker", natsURL)
			if r.code != 2 || r.stdout != "" || strings.Count(r.stderr, "\n") != 1 ||
				!strings.HasPrefix(r.stderr, "reliar: ") || !strings.Contains(r.stderr, tt.want) {
				t.Fatalf("exit %d, stdout %q, stderr %q; want 2, nothing, one line naming %s", r.code, r.stdout, r.stderr, tt.want)
			}
		})
	}
}
