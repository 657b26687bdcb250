package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/reliar/reliar/bench/internal/harness"
	"github.com/reliar/reliar/bench/internal/report"
	"github.com/reliar/reliar/outbox"
)

// Targets of issue 21.
const (
	maxP99VsIdle    = 5.0 // the small tenant's p99 behind the backlog over its idle p99, at most
	minDrainRatio   = 0.9 // the big tenant's drain rate, fair over unfair, at least
	maxClaimCostRat = 1.5 // the claim cost per row, fair over unfair, at most
)

// modes are the two claims, fair first.
var modes = []outbox.Fairness{outbox.FairnessTenant, outbox.FairnessUnordered}

// series is one claim's figures over the repetitions that succeeded.
type series struct {
	p50, p99, measured        []float64 // backlog: small tenant, ms and count
	toClaim50, toClaim99      []float64 // backlog: small tenant, commit → claim start, ms
	fromClaim50, fromClaim99  []float64 // backlog: small tenant, claim start → publish, ms
	drainRate, drainSeconds   []float64 // backlog: big tenant
	idleP50, idleP99          []float64 // idle: small tenant, ms
	claimUs, claims, claimP50 []float64 // claims: µs per row, count, ms
	duplicates                int64
	failed                    []string
}

// measure runs every scenario c.reps times, the two claims interleaved and
// their order alternated, and writes the report.
func measure(ctx context.Context, c config, stdout, stderr io.Writer) error {
	start := time.Now()
	res := map[outbox.Fairness]*series{}
	for _, f := range modes {
		res[f] = &series{}
	}
	h := &harness.Harness{DSN: c.dsn, Quick: c.quick}
	for rep := 1; rep <= c.reps; rep++ {
		order := slices.Clone(modes)
		if rep%2 == 0 {
			slices.Reverse(order)
		}
		for _, f := range order {
			s := res[f]
			r, err := backlogRun(ctx, c, f)
			s.duplicates += r.duplicates
			if s.fail(stderr, "backlog", f, rep, err) {
				continue
			}
			p50, p99 := ms(harness.Percentile(r.small, 50)), ms(harness.Percentile(r.small, 99))
			s.p50, s.p99, s.measured = append(s.p50, p50), append(s.p99, p99), append(s.measured, float64(len(r.small)))
			s.toClaim50, s.toClaim99 = append(s.toClaim50, ms(harness.Percentile(r.toClaim, 50))), append(s.toClaim99, ms(harness.Percentile(r.toClaim, 99)))
			s.fromClaim50, s.fromClaim99 = append(s.fromClaim50, ms(harness.Percentile(r.fromClaim, 50))), append(s.fromClaim99, ms(harness.Percentile(r.fromClaim, 99)))
			s.drainSeconds = append(s.drainSeconds, r.drainSeconds)
			s.drainRate = append(s.drainRate, float64(c.backlog)/r.drainSeconds)
			fmt.Fprintf(stderr, "rep %d backlog %-8s small p50 %.2f ms p99 %.2f ms (to claim start p50 %.2f p99 %.2f, from it p50 %.2f p99 %.2f; %d messages); big drained in %.3f s (%.0f msg/s, last arrival %.3f s)\n",
				rep, f, p50, p99, s.toClaim50[len(s.toClaim50)-1], s.toClaim99[len(s.toClaim99)-1],
				s.fromClaim50[len(s.fromClaim50)-1], s.fromClaim99[len(s.fromClaim99)-1], len(r.small), r.drainSeconds, float64(c.backlog)/r.drainSeconds, r.arrivedSeconds)
		}
		for _, f := range order {
			s := res[f]
			r, err := h.Latency(ctx, variant(f, nil).System(), rep, harness.LatencyConfig{Messages: c.idleMessages, Rate: c.rate, Timeout: c.runTimeout})
			s.duplicates += r.Duplicates
			if s.fail(stderr, "idle", f, rep, err) {
				continue
			}
			s.idleP50, s.idleP99 = append(s.idleP50, r.P50Ms), append(s.idleP99, r.P99Ms)
			fmt.Fprintf(stderr, "rep %d idle    %-8s small p50 %.2f ms p99 %.2f ms (%d messages)\n", rep, f, r.P50Ms, r.P99Ms, c.idleMessages)
		}
		for _, f := range order {
			s := res[f]
			r, err := claimRun(ctx, c, f)
			if s.fail(stderr, "claims", f, rep, err) {
				continue
			}
			us := float64(r.perRow().Nanoseconds()) / 1e3
			s.claimUs, s.claims, s.claimP50 = append(s.claimUs, us), append(s.claims, float64(r.claims)), append(s.claimP50, ms(r.p50))
			fmt.Fprintf(stderr, "rep %d claims  %-8s %d rows in %d claims: %.1f µs/row, claim p50 %.2f ms\n", rep, f, r.rows, r.claims, us, ms(r.p50))
		}
		if ctx.Err() != nil {
			break
		}
	}
	fmt.Fprintf(stderr, "done in %s\n", time.Since(start).Round(time.Second))
	writeReport(stdout, c, res[outbox.FairnessTenant], res[outbox.FairnessUnordered])
	var failed []string
	for _, f := range modes {
		failed = append(failed, res[f].failed...)
	}
	if len(failed) > 0 {
		return fmt.Errorf("%d runs failed: %s", len(failed), strings.Join(failed, "; "))
	}
	return nil
}

// fail records a failed run and reports whether err is one.
func (s *series) fail(stderr io.Writer, scenario string, f outbox.Fairness, rep int, err error) bool {
	if err == nil {
		return false
	}
	msg := fmt.Sprintf("rep %d %s %s: %v", rep, scenario, f, err)
	fmt.Fprintln(stderr, msg)
	s.failed = append(s.failed, msg)
	return true
}

// figures are the medians the last line and the targets compare.
type figures struct {
	tenantP99, unfairP99, idleP99, p99VsIdle, drainRatio, claimRatio float64
}

func compute(fair, unfair *series) figures {
	fg := figures{
		tenantP99: med(fair.p99), unfairP99: med(unfair.p99), idleP99: med(fair.idleP99),
		drainRatio: med(fair.drainRate) / med(unfair.drainRate),
		claimRatio: med(fair.claimUs) / med(unfair.claimUs),
	}
	fg.p99VsIdle = fg.tenantP99 / fg.idleP99
	return fg
}

// writeReport prints the table, the targets' status and the last line.
func writeReport(w io.Writer, c config, fair, unfair *series) {
	fmt.Fprintf(w, "big tenant: %d-row backlog (plain SQL); small tenant: %d single-message transactions/s (Store.Enqueue), measured while the backlog drains and idle (%d messages); claims: %d tenants × %d due rows, Store.Acquire of 512 until drained; outbox.DefaultSettings(), only Fairness changed; %d repetition(s), claims interleaved, medians (low–high over repetitions)\n\n",
		c.backlog, c.rate, c.idleMessages, c.tenants, c.perTenant, c.reps)
	fmt.Fprintln(w, "| measure | tenant | unfair (unordered) | tenant / unfair |")
	fmt.Fprintln(w, "|---|---|---|---|")
	row := func(name string, a, b []float64, unit string, prec int) {
		r := ratio(med(a), med(b))
		if unit == "" { // a count, not a figure to compare
			r = "–"
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s |\n", name, cell(a, unit, prec), cell(b, unit, prec), r)
	}
	row("small tenant behind the backlog: commit → publish p50", fair.p50, unfair.p50, "ms", 2)
	row("small tenant behind the backlog: commit → publish p99", fair.p99, unfair.p99, "ms", 2)
	row("… of which commit → start of the claim that took it, p50", fair.toClaim50, unfair.toClaim50, "ms", 2)
	row("… of which commit → start of the claim that took it, p99", fair.toClaim99, unfair.toClaim99, "ms", 2)
	row("… of which claim start → publish, p50", fair.fromClaim50, unfair.fromClaim50, "ms", 2)
	row("… of which claim start → publish, p99", fair.fromClaim99, unfair.fromClaim99, "ms", 2)
	row("small tenant behind the backlog: messages measured", fair.measured, unfair.measured, "", 0)
	row("small tenant idle: commit → publish p50", fair.idleP50, unfair.idleP50, "ms", 2)
	row("small tenant idle: commit → publish p99", fair.idleP99, unfair.idleP99, "ms", 2)
	row(fmt.Sprintf("big tenant: drain of %d rows", c.backlog), fair.drainRate, unfair.drainRate, "msg/s", 0)
	row("big tenant: drain time", fair.drainSeconds, unfair.drainSeconds, "s", 2)
	row(fmt.Sprintf("claim cost, %d tenants × %d rows", c.tenants, c.perTenant), fair.claimUs, unfair.claimUs, "µs/row", 1)
	row("claims that returned rows", fair.claims, unfair.claims, "", 0)
	row("claim p50", fair.claimP50, unfair.claimP50, "ms", 2)
	fmt.Fprintf(w, "| duplicates | %d | %d | – |\n", fair.duplicates, unfair.duplicates)

	fg := compute(fair, unfair)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| target (issue 21) | measured | status |")
	fmt.Fprintln(w, "|---|---|---|")
	fmt.Fprintf(w, "| small tenant's p99 behind the backlog ≤ %g× its idle p99 (tenant) | %s ms / %s ms = %s× | %s |\n",
		maxP99VsIdle, num(fg.tenantP99, 2), num(fg.idleP99, 2), num(fg.p99VsIdle, 2), status(fg.p99VsIdle <= maxP99VsIdle, fg.p99VsIdle))
	fmt.Fprintf(w, "| big tenant's drain ≥ %g× unfair | %s / %s msg/s = %s× | %s |\n",
		minDrainRatio, num(med(fair.drainRate), 0), num(med(unfair.drainRate), 0), num(fg.drainRatio, 2), status(fg.drainRatio >= minDrainRatio, fg.drainRatio))
	fmt.Fprintf(w, "| claim cost per row ≤ %g× unfair | %s / %s µs = %s× | %s |\n",
		maxClaimCostRat, num(med(fair.claimUs), 1), num(med(unfair.claimUs), 1), num(fg.claimRatio, 2), status(fg.claimRatio <= maxClaimCostRat, fg.claimRatio))
	fmt.Fprintln(w)
	fmt.Fprintln(w, lastLine(fg))
}

// lastLine is the command's last line.
func lastLine(fg figures) string {
	return fmt.Sprintf("fairness: small_p99_tenant_ms=%s small_p99_unfair_ms=%s small_p99_idle_ms=%s p99_ratio_vs_idle=%s drain_ratio=%s claim_cost_ratio=%s",
		num(fg.tenantP99, 2), num(fg.unfairP99, 2), num(fg.idleP99, 2), num(fg.p99VsIdle, 2), num(fg.drainRatio, 2), num(fg.claimRatio, 2))
}

func status(met bool, x float64) string {
	switch {
	case math.IsNaN(x):
		return "no figure"
	case met:
		return "met"
	}
	return "not met"
}

// med is the median, NaN for no values (a scenario none of whose runs
// succeeded).
func med(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	return report.Median(xs)
}

// cell is the median of xs with its unit, and the range when there is more
// than one value.
func cell(xs []float64, unit string, prec int) string {
	s := num(med(xs), prec)
	if unit != "" && s != "nan" {
		s += " " + unit
	}
	if len(xs) > 1 {
		s += " (" + num(slices.Min(xs), prec) + "–" + num(slices.Max(xs), prec) + ")"
	}
	return s
}

func ratio(a, b float64) string {
	if r := a / b; !math.IsNaN(r) && !math.IsInf(r, 0) {
		return num(r, 2)
	}
	return "–"
}

// num formats x with prec decimals, "nan" for no figure.
func num(x float64, prec int) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "nan"
	}
	return strconv.FormatFloat(x, 'f', prec, 64)
}

// ms converts d to fractional milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
