package report

import (
	"errors"
	"fmt"
)

// ErrMissing is returned by QuickLine when a run it needs did not succeed.
var ErrMissing = errors.New("report: no successful run")

// QuickLine is the last line of a quick run: Reliar's median drain
// throughput divided by each peer's, and Reliar's median latency
// percentiles.
func QuickLine(sums []Summary, reliar, raw, watermill, river string) (string, error) {
	get := func(scenario, system string) (Summary, error) {
		s, ok := Find(sums, scenario, system)
		if !ok {
			return s, fmt.Errorf("%w: %s %s", ErrMissing, scenario, system)
		}
		return s, nil
	}
	var errs []error
	must := func(scenario, system string) Summary {
		s, err := get(scenario, system)
		errs = append(errs, err)
		return s
	}
	r, rw, wm, rv := must(Drain, reliar), must(Drain, raw), must(Drain, watermill), must(Drain, river)
	lat := must(Latency, reliar)
	if err := errors.Join(errs...); err != nil {
		return "", err
	}
	return fmt.Sprintf("ratio_vs_raw=%.3f ratio_vs_watermill_tuned=%.3f ratio_vs_river_tuned=%.3f latency_p50_ms=%.2f latency_p99_ms=%.2f",
		r.PerSecond/rw.PerSecond, r.PerSecond/wm.PerSecond, r.PerSecond/rv.PerSecond, lat.P50Ms, lat.P99Ms), nil
}
