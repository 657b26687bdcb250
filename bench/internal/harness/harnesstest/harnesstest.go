// Package harnesstest checks a benchmark system end to end on the local
// PostgreSQL: a small drain and a short latency run must deliver every
// message exactly once and report sensible figures.
package harnesstest

import (
	"testing"
	"time"

	"github.com/reliar/reliar/bench/internal/harness"
	"github.com/reliar/reliar/bench/internal/pgenv"
	"github.com/reliar/reliar/bench/internal/report"
)

// Sizes of the check: small enough for a test, large enough that a drain
// takes several claims of every system.
const (
	drainMessages   = 1200
	perTx           = 100
	latencyMessages = 20
	rate            = 200
	timeout         = time.Minute
)

// Check runs sys through a drain and, unless drainOnly, a latency run.
func Check(t *testing.T, sys harness.System, drainOnly bool) {
	t.Helper()
	ctx := t.Context()
	h := &harness.Harness{DSN: pgenv.DefaultDSN}
	enq, drain, err := h.Drain(ctx, sys, 1, harness.DrainConfig{Messages: drainMessages, PerTx: perTx, Timeout: timeout})
	if err != nil {
		t.Fatalf("drain: %v", err)
	}
	checkThroughput(t, enq, report.Enqueue, sys.Name)
	checkThroughput(t, drain, report.Drain, sys.Name)
	if drain.ArrivedSeconds <= 0 || drain.ArrivedSeconds > drain.Seconds || drain.CPUNsPerMsg <= 0 {
		t.Errorf("drain: arrived after %vs of %vs, cpu %v ns/msg", drain.ArrivedSeconds, drain.Seconds, drain.CPUNsPerMsg)
	}
	if drainOnly {
		return
	}
	lat, err := h.Latency(ctx, sys, 1, harness.LatencyConfig{Messages: latencyMessages, Rate: rate, Timeout: timeout})
	if err != nil {
		t.Fatalf("latency: %v", err)
	}
	if !lat.OK() || lat.Scenario != report.Latency || lat.Messages != latencyMessages || lat.Duplicates != 0 {
		t.Errorf("latency result %+v", lat)
	}
	// Commit → arrival is clamped at zero (harness/latency.go): a message
	// can arrive before its producer's Commit returns, and with fast
	// dispatch (asynchronous claims) half of them may, so p50 can be 0; the
	// time from before the transaction cannot.
	if lat.P50Ms < 0 || lat.MaxMs <= 0 || lat.TxP50Ms <= 0 || lat.P50Ms > lat.P99Ms || lat.P99Ms > lat.MaxMs || lat.TxP50Ms < lat.P50Ms {
		t.Errorf("latency: p50 %v, p99 %v, max %v, from before the transaction p50 %v", lat.P50Ms, lat.P99Ms, lat.MaxMs, lat.TxP50Ms)
	}
}

func checkThroughput(t *testing.T, r report.Result, scenario, system string) {
	t.Helper()
	if !r.OK() || r.Scenario != scenario || r.System != system || r.Messages != drainMessages || r.PerTx != perTx {
		t.Errorf("%s result %+v", scenario, r)
	}
	if r.Seconds <= 0 || r.PerSecond <= 0 || r.Duplicates != 0 {
		t.Errorf("%s: %v msg/s over %vs, %d duplicates", scenario, r.PerSecond, r.Seconds, r.Duplicates)
	}
}
