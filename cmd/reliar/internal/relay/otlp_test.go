package relay

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/cmd/reliar/internal/broker"
	"github.com/reliar/reliar/cmd/reliar/internal/exitcode"
	"github.com/reliar/reliar/outbox"
)

// syncLog is a text logger whose output a test reads.
type syncLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *syncLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *syncLog) lines(level string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for line := range strings.SplitSeq(l.buf.String(), "\n") {
		if strings.Contains(line, "level="+level) {
			out = append(out, line)
		}
	}
	return out
}

// TestCollectorHealth: an outage of a collector is logged at warn once,
// whichever signals fail, its end at info once both signals export again,
// and the next outage at warn again. A failing signal is not flushed.
func TestCollectorHealth(t *testing.T) {
	t.Parallel()
	out := &syncLog{}
	cs := &collectorSet{log: slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{Level: slog.LevelInfo}))}
	traces := cs.health(&otelSignal{name: "traces", endpoint: "http://c:4318"})
	metrics := cs.health(&otelSignal{name: "metrics", endpoint: "http://c:4318/v1/metrics"})
	other := cs.health(&otelSignal{name: "metrics", endpoint: "http://elsewhere:4318"})
	down := errors.New("connection refused")

	traces.report(down)
	metrics.report(down)
	traces.report(down)
	if n := len(out.lines("WARN")); n != 1 {
		t.Fatalf("%d warnings after one outage, want 1", n)
	}
	if traces.flushContext(context.Background()).Err() == nil {
		t.Error("a failing signal gets a live flush context")
	}
	if other.flushContext(context.Background()).Err() != nil {
		t.Error("a signal of another collector is not flushed")
	}
	traces.report(nil)
	if n := len(out.lines("INFO")); n != 0 {
		t.Fatalf("recovery logged while metrics still fail")
	}
	metrics.report(nil)
	if got := out.lines("INFO"); len(got) != 1 || !strings.Contains(got[0], "recovered") {
		t.Fatalf("info lines %q, want one recovery", got)
	}
	if traces.flushContext(context.Background()).Err() != nil {
		t.Error("a recovered signal is not flushed")
	}
	metrics.report(down)
	other.report(down)
	if got := out.lines("WARN"); len(got) != 3 || !strings.Contains(got[2], "elsewhere") {
		t.Fatalf("warnings %q, want a second outage and the other collector's", got)
	}
}

// TestExportCutOffByShutdownIsNoOutage: the SDK cancels the export in
// flight when the relay shuts down; that says nothing about the collector,
// so it is not an outage (no warning, the final flush is still made), while
// an export that ran out of time is one.
func TestExportCutOffByShutdownIsNoOutage(t *testing.T) {
	t.Parallel()
	out := &syncLog{}
	cs := &collectorSet{log: slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{Level: slog.LevelInfo}))}
	metrics := cs.health(&otelSignal{name: "metrics", endpoint: "http://c:4318"})
	cut, cancel := context.WithCancel(context.Background())
	cancel()
	metrics.reportExport(cut, fmt.Errorf("failed to upload metrics: %w", context.Canceled))
	if got := out.lines("WARN"); len(got) != 0 {
		t.Fatalf("an export cut off by shutdown logged %q", got)
	}
	if metrics.flushContext(context.Background()).Err() != nil {
		t.Fatal("an export cut off by shutdown skipped the final flush")
	}
	late, stop := context.WithTimeout(context.Background(), 0)
	defer stop()
	<-late.Done()
	metrics.reportExport(late, context.DeadlineExceeded)
	if got := out.lines("WARN"); len(got) != 1 {
		t.Fatalf("an export that timed out logged %q, want one warning", got)
	}
}

// recorder records the calls it gets.
type recorder struct {
	mu    sync.Mutex
	calls []string
}

func (r *recorder) add(call string) {
	r.mu.Lock()
	r.calls = append(r.calls, call)
	r.mu.Unlock()
}

func (r *recorder) Claimed(int)                                             { r.add("Claimed") }
func (r *recorder) Published(string, time.Duration)                         { r.add("Published") }
func (r *recorder) PublishFailed(string, reliar.FailureKind, time.Duration) { r.add("PublishFailed") }
func (r *recorder) Retried(reliar.FailureKind)                              { r.add("Retried") }
func (r *recorder) Dead(outbox.DeadReason, int)                             { r.add("Dead") }
func (r *recorder) OutcomeWriteFailed(int)                                  { r.add("OutcomeWriteFailed") }
func (r *recorder) LeaseShortfall(int)                                      { r.add("LeaseShortfall") }
func (r *recorder) Abandoned(int)                                           { r.add("Abandoned") }
func (r *recorder) ReleasedAtDrain(int)                                     { r.add("ReleasedAtDrain") }
func (r *recorder) BreakerOpen(bool)                                        { r.add("BreakerOpen") }
func (r *recorder) RedeliveryOutsideDedup(int)                              { r.add("RedeliveryOutsideDedup") }
func (r *recorder) Stats(outbox.Stats)                                      { r.add("Stats") }
func (r *recorder) CallGivenUp(string)                                      { r.add("CallGivenUp") }
func (r *recorder) InvalidBatchResults(int)                                 { r.add("InvalidBatchResults") }

// TestFanoutFeedsEvery: every method of the fan-out reaches every Metrics.
func TestFanoutFeedsEvery(t *testing.T) {
	t.Parallel()
	a, b := &recorder{}, &recorder{}
	var m outbox.Metrics = fanout{a, b}
	v := reflect.ValueOf(m)
	var want []string
	for i := range v.NumMethod() {
		meth := v.Method(i)
		args := make([]reflect.Value, meth.Type().NumIn())
		for j := range args {
			args[j] = reflect.Zero(meth.Type().In(j))
		}
		meth.Call(args)
		want = append(want, v.Type().Method(i).Name)
	}
	if len(want) != reflect.TypeFor[outbox.Metrics]().NumMethod() {
		t.Fatalf("called %d methods, outbox.Metrics has %d", len(want), reflect.TypeFor[outbox.Metrics]().NumMethod())
	}
	for _, r := range []*recorder{a, b} {
		if !reflect.DeepEqual(r.calls, want) {
			t.Errorf("calls %v, want %v", r.calls, want)
		}
	}
}

// TestTelemetryOff: without an endpoint there is no telemetry, and the
// relay runs as before.
func TestTelemetryOff(t *testing.T) {
	t.Parallel()
	tel, err := startTelemetry(t.Context(), env(map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}), validConfig(t), quiet)
	if tel != nil || err != nil {
		t.Fatalf("startTelemetry = %v, %v; want nil, nil", tel, err)
	}
	m := outbox.NoopMetrics{}
	if tel.wrap(m) != outbox.Metrics(m) || tel.options() != nil {
		t.Fatal("nil telemetry changes the dispatchers")
	}
	tel.shutdown()
}

// TestStartTelemetryBadVariable: a bad variable is bad input.
func TestStartTelemetryBadVariable(t *testing.T) {
	t.Parallel()
	lookup := env(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_PROTOCOL": "thrift"})
	tel, err := startTelemetry(t.Context(), lookup, validConfig(t), quiet)
	if tel != nil || exitcode.Code(err, 0) != exitcode.Usage || !strings.Contains(err.Error(), "OTEL_EXPORTER_OTLP_PROTOCOL") {
		t.Fatalf("startTelemetry = %v, %v; want a usage error naming the variable", tel, err)
	}
}

// otlpHTTP is an OTLP/HTTP receiver counting what it gets.
type otlpHTTP struct {
	mu               sync.Mutex
	spans            map[string]int // by name
	metrics          map[string]bool
	traceReqs, mReqs int
}

func startOTLPHTTP(t *testing.T) (*otlpHTTP, string) {
	t.Helper()
	r := &otlpHTTP{spans: map[string]int{}, metrics: map[string]bool{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/traces", func(w http.ResponseWriter, req *http.Request) {
		var in coltracepb.ExportTraceServiceRequest
		b, _ := io.ReadAll(req.Body)
		if err := proto.Unmarshal(b, &in); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.mu.Lock()
		r.traceReqs++
		for _, rs := range in.GetResourceSpans() {
			for _, ss := range rs.GetScopeSpans() {
				for _, s := range ss.GetSpans() {
					r.spans[s.GetName()]++
				}
			}
		}
		r.mu.Unlock()
		out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	})
	mux.HandleFunc("POST /v1/metrics", func(w http.ResponseWriter, req *http.Request) {
		var in colmetricspb.ExportMetricsServiceRequest
		b, _ := io.ReadAll(req.Body)
		if err := proto.Unmarshal(b, &in); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.mu.Lock()
		r.mReqs++
		for _, rm := range in.GetResourceMetrics() {
			for _, sm := range rm.GetScopeMetrics() {
				for _, m := range sm.GetMetrics() {
					r.metrics[m.GetName()] = true
				}
			}
		}
		r.mu.Unlock()
		out, _ := proto.Marshal(&colmetricspb.ExportMetricsServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return r, srv.URL
}

// TestRunFlushesOTLPAtShutdown runs the relay in-process with export
// intervals far longer than the run: what it exports arrives through the
// flush at shutdown, and no exporter goroutine outlives Run (goleak, in
// TestMain).
func TestRunFlushesOTLPAtShutdown(t *testing.T) {
	rcv, url := startOTLPHTTP(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", url)
	t.Setenv("OTEL_METRIC_EXPORT_INTERVAL", "600000")
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "600000")
	s := newSchema(t)
	s.migrate(t)
	prefix := randomName("relay_unit_")
	count := newStream(t, prefix)
	r := start(t, testConfig(t, s, natsURL, broker.Options{SubjectPrefix: prefix}))
	s.exec(t, `INSERT INTO `+s.table()+` (id, message_type, payload) SELECT gen_random_uuid(), 'order_placed', '\x7b7d' FROM generate_series(1, 7)`)
	eventually(t, "7 messages", func() bool { return count() == 7 })
	eventually(t, "the metrics", func() bool {
		_, body := r.get(t, "/metrics")
		return strings.Contains(body, `reliar_outbox_published_total{message_type="order_placed"} 7`)
	})
	rcv.mu.Lock()
	early := rcv.traceReqs + rcv.mReqs
	rcv.mu.Unlock()
	if early != 0 {
		t.Fatalf("%d exports before shutdown with 10-minute intervals", early)
	}
	if err := r.stop(t); err != nil {
		t.Fatalf("Run = %v", err)
	}
	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	if rcv.spans["reliar.outbox.publish"] != 7 || rcv.spans["reliar.outbox.claim"] == 0 {
		t.Errorf("spans %v after the flush, want 7 publish spans and claim spans", rcv.spans)
	}
	if !rcv.metrics["reliar.outbox.published"] {
		t.Errorf("metrics %v after the flush, want reliar.outbox.published", rcv.metrics)
	}
}
